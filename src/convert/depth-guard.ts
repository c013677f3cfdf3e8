/**
 * htmlparser2 keeps its open-element stack with Array.unshift, so a 100,000-deep document costs O(n²) to
 * parse (seconds to minutes). This linear pre-pass removes start tags that would open beyond MAX_OPEN
 * elements (and their end tags), so the words stay and the structure past the bound is flattened.
 * It runs only when a cheap first scan finds such depth; normal documents pass through untouched.
 */
const MAX_OPEN = 1000;
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'keygen',
  'command',
  'basefont',
  'frame',
  'isindex',
]);
// Start tags that close an open element of the same name (browser "implied end tags"), so sibling
// <li>/<p>/<td> without end tags do not count as nesting.
const SELF_CLOSING_SIBLINGS = new Set(['li', 'p', 'td', 'th', 'tr', 'dt', 'dd', 'option', 'thead', 'tbody', 'tfoot']);

interface Tag {
  start: number;
  end: number;
  slash: string;
  /** Lower-case name; undefined for a comment or a raw-text element (script, style …) passed through whole. */
  name?: string;
  selfClose: string;
}

const NAME_START = /[a-zA-Z]/;
const NAME_CHAR = /[a-zA-Z0-9-]/;
const WHITE = /\s/;
const WORD = /\w/;
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title']);

/**
 * The tags of `html` in order, as this regular expression finds them:
 *   <(\/?)([a-zA-Z][a-zA-Z0-9-]*)(?:\s[^>]*)?(\/?)>  |  <!--[\s\S]*?-->  |  <(script|style|textarea|title)\b[^>]*>[\s\S]*?<\/\4\s*>
 * but in linear time. The expression itself, on a tag or comment that is never closed, scanned to the end
 * of the input from every "<": 40,000 "<!--" took 15 s. Here each terminator is looked for only when
 * one exists further on (its last position is known), so every search ends in a match that is consumed.
 * `visit` returns false to stop.
 */
function scanTags(html: string, visit: (tag: Tag) => boolean | void): void {
  const lastGt = html.lastIndexOf('>');
  const lastCommentEnd = html.lastIndexOf('-->');
  const lastRawClose = new Map<string, number>();
  const rawCloseAfter = (name: string, from: number): number => {
    let last = lastRawClose.get(name);
    if (last === undefined) {
      last = -1;
      const re = new RegExp(`</${name}\\s*>`, 'g');
      for (let m = re.exec(html); m; m = re.exec(html)) last = m.index;
      lastRawClose.set(name, last);
    }
    if (last < from) return -1;
    const re = new RegExp(`</${name}\\s*>`, 'g');
    re.lastIndex = from;
    const m = re.exec(html)!;
    return m.index + m[0].length;
  };
  let i = html.indexOf('<');
  while (i >= 0 && i < lastGt) {
    let tag: Tag | undefined;
    // <name …> or </name …>
    const slash = html[i + 1] === '/' ? '/' : '';
    let k = i + 1 + slash.length;
    if (NAME_START.test(html[k] ?? '')) {
      const nameStart = k;
      while (k < html.length && NAME_CHAR.test(html[k]!)) k++;
      const c = html[k] ?? '';
      const name = html.slice(nameStart, k);
      if (c === '>') tag = { start: i, end: k + 1, slash, name: name.toLowerCase(), selfClose: '' };
      else if (c === '/' && html[k + 1] === '>') tag = { start: i, end: k + 2, slash, name: name.toLowerCase(), selfClose: '/' };
      else if (WHITE.test(c) && k <= lastGt) {
        tag = { start: i, end: html.indexOf('>', k) + 1, slash, name: name.toLowerCase(), selfClose: '' };
      } else if (!slash && RAW_TEXT.has(name) && !WORD.test(c) && k <= lastGt) {
        // Not a plain tag (e.g. <script"…>): the whole element up to its end tag, when there is one.
        const close = rawCloseAfter(name, html.indexOf('>', k) + 1);
        if (close >= 0) tag = { start: i, end: close, slash: '', name: undefined, selfClose: '' };
      }
    } else if (html.startsWith('<!--', i) && i + 4 <= lastCommentEnd) {
      tag = { start: i, end: html.indexOf('-->', i + 4) + 3, slash: '', name: undefined, selfClose: '' };
    }
    if (tag) {
      if (visit(tag) === false) return;
      i = html.indexOf('<', tag.end);
    } else i = html.indexOf('<', i + 1);
  }
}

export function boundHtmlDepth(html: string): string {
  if (!exceeds(html)) return html;
  const stack: string[] = [];
  const dropped = new Map<string, number>();
  const out: string[] = [];
  let copied = 0;
  const drop = (tag: Tag) => {
    out.push(html.slice(copied, tag.start), ' ');
    copied = tag.end;
  };
  scanTags(html, (tag) => {
    const name = tag.name;
    if (!name) return; // comment or raw-text element: untouched
    if (VOID.has(name) || tag.selfClose) return;
    if (!tag.slash) {
      if (SELF_CLOSING_SIBLINGS.has(name) && stack[stack.length - 1] === name) stack.pop();
      if (stack.length >= MAX_OPEN) {
        dropped.set(name, (dropped.get(name) ?? 0) + 1);
        drop(tag);
        return;
      }
      stack.push(name);
      return;
    }
    if (stack[stack.length - 1] === name) {
      stack.pop();
      return;
    }
    const d = dropped.get(name) ?? 0;
    if (d > 0) {
      dropped.set(name, d - 1);
      drop(tag);
      return;
    }
    for (let i = stack.length - 1; i >= Math.max(0, stack.length - 64); i--) {
      if (stack[i] === name) {
        stack.length = i;
        break;
      }
    }
  });
  out.push(html.slice(copied));
  return out.join('');
}

function exceeds(html: string): boolean {
  let depth = 0;
  let last = '';
  let over = false;
  scanTags(html, (tag) => {
    const name = tag.name;
    if (!name || VOID.has(name) || tag.selfClose) return;
    if (tag.slash) depth--;
    else if (!(SELF_CLOSING_SIBLINGS.has(name) && name === last)) {
      if (++depth > MAX_OPEN) {
        over = true;
        return false;
      }
    }
    last = tag.slash ? '' : name;
  });
  return over;
}
