/**
 * The DOM path of Markdown → DOCX (used when the direct writer, markdown-docx.ts, does not apply): the DOM
 * the HTML parser would build from markdown-it's compact HTML, built straight from the tokens instead.
 */
import { DomHandler, parseDocument } from 'htmlparser2';
import type { ChildNode, Document, Text } from 'domhandler';
import { TASK_CHECKBOX, TASK_CHECKBOXES } from './markdown-tasklists.js';
import type { MarkdownItInstance, MdToken, RenderEnv } from './markdown.js';

/** The DOM of the tokens, or undefined when they hold a token this does not know (or options it cannot follow). */
export function markdownDom(md: MarkdownItInstance, tokens: MdToken[], env: RenderEnv): Document | undefined {
  const handler = new DomBuilder();
  if (!buildDom(md, tokens, env, handler)) return undefined;
  handler.onend();
  return handler.root;
}

// Rule-rendered tokens whose HTML is a balanced fragment: rendered, parsed and grafted.
const GRAFTED = new Set(['fence', 'image', 'footnote_ref', 'footnote_anchor', 'html_inline']);

const NO_ATTRIBS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** DomHandler, plus appending a node built elsewhere as the next child of the open element. */
class DomBuilder extends DomHandler {
  append(node: ChildNode): void {
    this.addNode(node);
  }
}

function buildDom(md: MarkdownItInstance, tokens: MdToken[], env: RenderEnv, h: DomBuilder): boolean {
  const renderer = md.renderer;
  const rules = renderer.rules;
  const options = md.options;
  const attrsOf = (t: MdToken): Record<string, string> => {
    // Most tokens have no attributes: their elements share one frozen empty object (one allocation less per
    // DOM element, and the DOM lives through the whole conversion). The converter never writes to these.
    if (!t.attrs) return NO_ATTRIBS;
    const out: Record<string, string> = {};
    // The HTML parser keeps the first of repeated attributes.
    for (const [name, value] of t.attrs) if (!Object.prototype.hasOwnProperty.call(out, name)) out[name] = String(value);
    return out;
  };
  const element = (name: string, attribs: Record<string, string>, text?: string) => {
    h.onopentag(name, attribs);
    if (text) h.ontext(text);
    h.onclosetag();
  };
  const graft = (html: string) => {
    for (const node of parseDocument(html, PARSE_OPTIONS).children) {
      if (node.type === 'text') h.ontext((node as Text).data);
      else h.append(node as ChildNode);
    }
  };
  const footnoteId = (list: MdToken[], idx: number) => {
    let id = String(rules.footnote_anchor_name!(list, idx, options, env, renderer));
    const subId = (list[idx]!.meta as { subId?: number } | null)?.subId ?? 0;
    if (subId > 0) id += `:${subId}`;
    return id;
  };
  const emit = (list: MdToken[]): boolean => {
    for (let i = 0; i < list.length; i++) {
      const t = list[i]!;
      switch (t.type) {
        case 'inline':
          if (t.children && !emit(t.children)) return false;
          continue;
        case 'text':
          if (t.content) h.ontext(t.content);
          continue;
        case 'softbreak':
          if (options.breaks) return false;
          h.ontext('\n');
          continue;
        case 'hardbreak':
          element('br', NO_ATTRIBS);
          h.ontext('\n');
          continue;
        case 'code_inline':
          element('code', attrsOf(t), t.content);
          continue;
        case 'fence': {
          // markdown-it's stock fence rule, as the DOM its (compact) HTML parses to: <pre><code class="{langPrefix}{lang}">
          // — built here rather than rendered and parsed per fence. With a highlighter, rendered and grafted below.
          if (options.highlight) break;
          const info = t.info ? md.utils.unescapeAll(t.info).trim() : '';
          let attribs = attrsOf(t);
          if (info) {
            const langClass = options.langPrefix + info.split(/(\s+)/g)[0];
            const attrs = t.attrs ? t.attrs.map(([name, value]) => [name, value] as [string, string]) : [];
            const at = t.attrIndex('class');
            if (at < 0) attrs.push(['class', langClass]);
            else attrs[at]![1] += ' ' + langClass;
            attribs = {};
            for (const [name, value] of attrs) if (!Object.prototype.hasOwnProperty.call(attribs, name)) attribs[name] = String(value);
          }
          h.onopentag('pre', NO_ATTRIBS);
          element('code', attribs, t.content);
          h.onclosetag();
          continue;
        }
        case 'code_block':
          h.onopentag('pre', attrsOf(t));
          element('code', NO_ATTRIBS, t.content);
          h.onclosetag();
          continue;
        case 'footnote_block_open':
          element('hr', { class: 'footnotes-sep' });
          h.ontext('\n');
          h.onopentag('section', { class: 'footnotes' });
          h.ontext('\n');
          h.onopentag('ol', { class: 'footnotes-list' });
          h.ontext('\n');
          continue;
        case 'footnote_block_close':
          h.onclosetag();
          h.ontext('\n');
          h.onclosetag();
          h.ontext('\n');
          continue;
        case 'footnote_open':
          h.onopentag('li', { id: `fn${footnoteId(list, i)}`, class: 'footnote-item' });
          continue;
        case 'footnote_close':
          h.onclosetag();
          h.ontext('\n');
          continue;
        case 'footnote_ref': {
          // <sup class="footnote-ref"><a href="#fn{id}" id="fnref{id[:sub]}">{caption}</a></sup>
          const id = String(rules.footnote_anchor_name!(list, i, options, env, renderer));
          h.onopentag('sup', { class: 'footnote-ref' });
          element('a', { href: `#fn${id}`, id: `fnref${footnoteId(list, i)}` }, String(rules.footnote_caption!(list, i, options, env, renderer)));
          h.onclosetag();
          continue;
        }
        case 'footnote_anchor':
          // " <a href="#fnref{id[:sub]}" class="footnote-backref">↩︎</a>"
          h.ontext(' ');
          element('a', { href: `#fnref${footnoteId(list, i)}`, class: 'footnote-backref' }, '\u21a9\uFE0E');
          continue;
        case 'html_inline': {
          const checkbox = TASK_CHECKBOXES.get(t.content);
          if (!checkbox) break; // grafted below, or refused
          element('input', { ...checkbox });
          continue;
        }
      }
      if (GRAFTED.has(t.type)) {
        if (t.type === 'html_inline' && !t.content.startsWith(TASK_CHECKBOX)) return false;
        const rule = rules[t.type];
        if (!rule) return false;
        graft(rule(list, i, options, env, renderer));
        continue;
      }
      if (rules[t.type]) return false; // rendered by a rule this does not know
      if (t.hidden) continue;
      if (t.nesting === 1) h.onopentag(t.tag, attrsOf(t));
      else if (t.nesting === -1) h.onclosetag();
      else element(t.tag, attrsOf(t));
    }
    return true;
  };
  return emit(tokens);
}

const PARSE_OPTIONS = { lowerCaseTags: true, lowerCaseAttributeNames: true, decodeEntities: true, recognizeSelfClosing: false };
