/** GFM task lists: markdown-it-task-lists, made linear, and the checkboxes it writes as raw inline HTML. */
import type { MarkdownItInstance } from './markdown.js';

// The task-list plugin writes its checkboxes as raw inline HTML: a void element, no nesting.
export const TASK_CHECKBOX = '<input class="task-list-item-checkbox"';
// Its two checkboxes (disabled), and the attributes the HTML parser reads from them.
export const TASK_CHECKBOXES = new Map<string, Record<string, string>>([
  ['<input class="task-list-item-checkbox" disabled="" type="checkbox">', { class: 'task-list-item-checkbox', disabled: '', type: 'checkbox' }],
  [
    '<input class="task-list-item-checkbox" checked="" disabled="" type="checkbox">',
    { class: 'task-list-item-checkbox', checked: '', disabled: '', type: 'checkbox' },
  ],
]);

/**
 * markdown-it-task-lists finds each task item's list by scanning back through every token before it, so a
 * list of 100,000 tasks took minutes. The same rule (with the options used here: disabled checkboxes, no
 * label), with the last token seen at each nesting level kept as it goes: the list is the nearest earlier
 * token one level up.
 */
export function linearTaskLists(md: MarkdownItInstance): void {
  md.core.ruler.at('github-task-lists', (state) => {
    const tokens = state.tokens;
    const lastAtLevel: number[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (
        i >= 2 &&
        t.type === 'inline' &&
        tokens[i - 1]!.type === 'paragraph_open' &&
        tokens[i - 2]!.type === 'list_item_open' &&
        TASK_MARK.test(t.content) &&
        t.children?.length
      ) {
        const checked = t.content.charCodeAt(1) !== 0x20;
        const box = new state.Token('html_inline', '', 0);
        box.content = checked ? TASK_CHECKED : TASK_UNCHECKED;
        t.children.unshift(box);
        t.children[1]!.content = t.children[1]!.content.slice(3);
        t.content = t.content.slice(3);
        tokens[i - 2]!.attrSet('class', 'task-list-item');
        // Tokens i-2 and i-1 are deeper than the list, so the entry one level up is still the one before them.
        const parent = lastAtLevel[tokens[i - 2]!.level - 1];
        if (parent !== undefined) tokens[parent]!.attrSet('class', 'contains-task-list');
      }
      lastAtLevel[t.level] = i;
    }
  });
}

const TASK_MARK = /^\[[ xX]\] /;
export const TASK_UNCHECKED = '<input class="task-list-item-checkbox" disabled="" type="checkbox">';
export const TASK_CHECKED = '<input class="task-list-item-checkbox" checked="" disabled="" type="checkbox">';
