/**
 * The reference-HTML normaliser of the conformance suite: a spec example's expected HTML → the Word-level model
 * (word-model.ts), rendered the way a browser shows it (HTML's default display of each element), so it can be
 * compared with what docx-reader.ts reads back from the DOCX. It shares no code with the converter.
 *
 * Rules, and where the model deliberately sees less than the HTML (each an exclusion, with its reason):
 * 1. Tight and loose lists are alike: the only difference is paragraph spacing.
 * 2. Which container nests in which (a list inside a quote inside a list …) is not kept, only the quote depth
 *    and the list path of each block: Word has no nesting, only indentation and numbering.
 * 3. A list item whose first content is a nested list (or a table) shows an empty numbered paragraph first: a
 *    Word paragraph carries one number, so the browser's "1. •" on one line cannot be written.
 * 4. Images become their alt text: the examples' images are URLs, and the converter never fetches (security
 *    rule of the service); a DOCX reader sees the description in their place either way.
 * 5. Link titles (title="…") are not compared: a tooltip is not document content.
 * 6. An empty href (`href=""`), and javascript:, vbscript: and data: targets are not links: the first names the
 *    document itself, which a DOCX has no address for; the others are never written as links (security).
 * 7. Boldness of table header cells is not compared (header cells are bold by default in browsers and Word).
 * 8. Empty paragraphs are not blocks (in Word they are spacing). Empty headings, list items, code blocks are.
 * 9. A code block's text is compared without its final line end (HTML's `<pre>` ends with one; Word's
 *    paragraph end is that line end).
 * 10. A line break at the very end of a paragraph is not compared (browsers do not show it).
 * 11. Footnotes: each reference is a footnote mark and the note's blocks follow the body in order of
 *     reference (Word numbers notes itself; a second reference to one note repeats the note, as Word has one
 *     note per reference). Back-reference links (↩) are not content.
 * 12. Left and unspecified cell alignment are the same (both render left).
 * 13. Upstream's crash tests (expected HTML `<IGNORE>`) only have to convert into a readable DOCX
 *     (conformance.ts).
 * Rendering, not exclusion: elements browsers do not display (head, script, style, title, template …) show
 * nothing; a <textarea> shows its text; content misplaced inside table structure shows before the table
 * (HTML's foster parenting) and a caption above it; table rows without cells show nothing; <q> adds quotes;
 * address is italic, dt/legend/summary bold; a checkbox <input> shows ☐ or ☒; link targets are compared after
 * percent-decoding and with internationalised host names in Unicode.
 * Everything else is compared: text, bold, italic, code, strike, link targets, line breaks, headings and
 * their levels, list kind and the ordinal shown, list depth, quote depth, code block text, thematic breaks,
 * tables (rows, cells, header rows, alignment).
 */
import { parseDocument } from 'htmlparser2';
import type { AnyNode, Element } from 'domhandler';
import { BREAK, NO_MARKS, type Block, type Cell, type ListLevel, type Mark, type Row, type Span } from './word-model.js';
import { withoutBold } from './docx-reader.js';

const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'center',
  'dd',
  'details',
  'dialog',
  'dir',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'listing',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'plaintext',
  'pre',
  'search',
  'section',
  'summary',
  'table',
  'ul',
  'xmp',
  'caption',
]);
// Elements a browser does not display (HTML's rendering section: display: none, or replaced content we
// cannot have).
const HIDDEN = new Set([
  'head',
  'script',
  'style',
  'template',
  'title',
  'noscript',
  'meta',
  'link',
  'base',
  'area',
  'map',
  'param',
  'source',
  'track',
  'datalist',
  'rp',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'canvas',
  'svg',
  'math',
]);
const UNSAFE_HREF = /^\s*(javascript|vbscript|data):/i;

interface Ctx {
  quote: number;
  list: ListLevel[];
  item?: { headPending: boolean };
  marks: ReadonlySet<Mark>;
  href?: string;
  note: number;
}

class Normaliser {
  readonly blocks: Block[] = [];
  private open: Block | null = null;
  private readonly notes = new Map<string, Element>();
  readonly noteQueue: Element[] = [];

  constructor(notes?: Map<string, Element>) {
    if (notes) this.notes = notes;
  }

  collectNotes(root: AnyNode[]): void {
    const stack = [...root];
    while (stack.length) {
      const n = stack.pop()!;
      if (n.type !== 'tag') continue;
      const el = n as Element;
      if (isNoteSection(el)) {
        for (const li of descendants(el, 'li')) if (li.attribs.id) this.notes.set(li.attribs.id, li);
        continue;
      }
      stack.push(...el.children);
    }
  }

  private newBlock(kind: Block['kind'], ctx: Ctx): Block {
    this.flush();
    const head = !!ctx.item?.headPending;
    if (ctx.item) ctx.item.headPending = false;
    const b: Block = { kind, quote: ctx.quote, list: ctx.list, head, note: ctx.note };
    return b;
  }

  private flush(): void {
    const b = this.open;
    if (!b) return;
    this.open = null;
    if (b.kind === 'p' && !b.head && !(b.spans ?? []).some((s) => s.note || s.br || /[^ \t\n\r\f]/.test(s.text))) return;
    this.blocks.push(b);
  }

  private inline(span: Span, ctx: Ctx): void {
    if (!this.open) {
      if (!span.note && !span.br && !/[^ \t\n\r\f]/.test(span.text)) return; // white space opens nothing
      this.open = this.newBlock('p', ctx);
      this.open.spans = [];
    }
    this.open.spans!.push(span);
  }

  walkAll(nodes: AnyNode[], ctx: Ctx): void {
    for (const n of nodes) this.walk(n, ctx);
  }

  walk(node: AnyNode, ctx: Ctx): void {
    if (node.type === 'text') {
      this.inline({ text: (node as unknown as { data: string }).data, marks: ctx.marks, href: ctx.href }, ctx);
      return;
    }
    if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') return;
    const el = node as Element;
    const tag = el.name;
    if (HIDDEN.has(tag) || el.attribs.hidden !== undefined) return;
    if (isNoteSection(el) && this.notes.size) return;
    if (BLOCK.has(tag)) this.block(el, tag, ctx);
    else this.inlineElement(el, tag, ctx);
  }

  private block(el: Element, tag: string, ctx: Ctx): void {
    switch (tag) {
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6': {
        const b = this.newBlock('h', ctx);
        b.level = Number(tag[1]);
        b.spans = [];
        this.open = b;
        this.walkAll(el.children, { ...ctx, item: undefined });
        if (this.open === b) {
          this.open = null;
          this.blocks.push(b);
        }
        return;
      }
      case 'pre':
      case 'listing':
      case 'xmp':
      case 'plaintext': {
        const b = this.newBlock('code', ctx);
        let text = preText(el);
        if (text.startsWith('\n')) text = text.slice(1); // the parser keeps it, browsers drop it
        b.text = text.replace(/\n$/, '');
        this.blocks.push(b);
        return;
      }
      case 'hr':
        this.blocks.push(this.newBlock('hr', ctx));
        return;
      case 'blockquote':
        this.flush();
        this.walkAll(el.children, { ...ctx, quote: ctx.quote + 1, item: ctx.item });
        this.flush();
        return;
      case 'ul':
      case 'ol':
      case 'menu':
      case 'dir':
        this.list(el, tag === 'ol', ctx);
        return;
      case 'li':
        // A stray <li> outside a list is a bullet item.
        this.item(el, { kind: 'u' }, ctx);
        return;
      case 'table':
        this.table(el, ctx);
        return;
      case 'address':
        this.flush();
        this.walkAll(el.children, { ...ctx, marks: withMark(ctx.marks, 'i') });
        this.flush();
        return;
      case 'dt':
      case 'legend':
      case 'summary':
        this.flush();
        this.walkAll(el.children, { ...ctx, marks: withMark(ctx.marks, 'b') });
        this.flush();
        return;
      default:
        this.flush();
        this.walkAll(el.children, ctx);
        this.flush();
    }
  }

  private list(el: Element, ordered: boolean, ctx: Ctx): void {
    this.flush();
    let n = ordered && el.attribs.start !== undefined && /^\s*-?\d+/.test(el.attribs.start) ? parseInt(el.attribs.start, 10) : 1;
    for (const child of el.children) {
      if (child.type === 'tag' && (child as Element).name === 'li') {
        const li = child as Element;
        if (ordered && li.attribs.value !== undefined && /^\s*-?\d+/.test(li.attribs.value)) n = parseInt(li.attribs.value, 10);
        this.item(li, ordered ? { kind: 'o', ordinal: n } : { kind: 'u' }, ctx);
        n++;
      } else this.walk(child, ctx);
    }
    this.flush();
  }

  private item(li: Element, level: ListLevel, ctx: Ctx): void {
    this.flush();
    const inner: Ctx = { ...ctx, list: [...ctx.list, level], item: { headPending: true } };
    for (const child of li.children) {
      if (inner.item!.headPending && !this.open && child.type === 'tag' && ['ul', 'ol', 'menu', 'dir', 'table'].includes((child as Element).name)) {
        // The item's own (empty) numbered paragraph comes before a nested list: rule 3.
        this.blocks.push(this.newBlock('p', inner));
        this.blocks[this.blocks.length - 1]!.spans = [];
      }
      this.walk(child, inner);
    }
    this.flush();
    if (inner.item!.headPending) {
      const b = this.newBlock('p', inner);
      b.spans = [];
      this.blocks.push(b);
    }
  }

  private table(el: Element, ctx: Ctx): void {
    // Content misplaced in table structure is shown before the table (HTML's "foster parenting"); a caption
    // shows above it; rows without cells show nothing.
    this.flush();
    for (const n of fosterParented(el)) this.walk(n, ctx);
    for (const c of el.children) if (c.type === 'tag' && (c as Element).name === 'caption') this.block(c as Element, 'div', ctx);
    this.flush();
    const rows: Array<{ tr: Element; thead: boolean }> = [];
    for (const c of el.children) {
      if (c.type !== 'tag') continue;
      const e = c as Element;
      if (e.name === 'tr') rows.push({ tr: e, thead: false });
      else if (e.name === 'thead' || e.name === 'tbody' || e.name === 'tfoot') {
        for (const r of e.children) if (r.type === 'tag' && (r as Element).name === 'tr') rows.push({ tr: r as Element, thead: e.name === 'thead' });
      }
    }
    const withCells = (tr: Element) => tr.children.some((c) => c.type === 'tag' && ((c as Element).name === 'td' || (c as Element).name === 'th'));
    rows.splice(0, rows.length, ...rows.filter((r) => withCells(r.tr)));
    if (!rows.length) return;
    const b = this.newBlock('table', ctx);
    b.head = false;
    b.list = ctx.list;
    const anyThead = rows.some((r) => r.thead);
    let leading = !anyThead;
    b.rows = rows.map(({ tr, thead }): Row => {
      const cellEls = tr.children.filter((c) => c.type === 'tag' && ((c as Element).name === 'td' || (c as Element).name === 'th')) as Element[];
      const allTh = cellEls.length > 0 && cellEls.every((c) => c.name === 'th');
      leading = leading && allTh && rows.length > 1;
      const header = thead || leading;
      const cells = cellEls.map((td): Cell => {
        const sub = new Normaliser(this.notes);
        sub.walkAll(td.children, { quote: 0, list: [], marks: NO_MARKS, note: ctx.note });
        sub.flush();
        this.noteQueue.push(...sub.noteQueue);
        const spans: Span[] = [];
        sub.blocks.forEach((blk, i) => {
          if (i) spans.push(BREAK);
          spans.push(...(blk.spans ?? (blk.text !== undefined ? [{ text: blk.text, marks: NO_MARKS }] : [])));
        });
        const a = (td.attribs.align ?? /text-align:\s*(\w+)/i.exec(td.attribs.style ?? '')?.[1] ?? '').toLowerCase();
        const align: Cell['align'] = a === 'center' ? 'center' : a === 'right' ? 'right' : a === 'justify' ? 'justify' : '';
        return { align, spans: header ? spans.map(withoutBold) : spans };
      });
      return { header, cells };
    });
    this.blocks.push(b);
  }

  private inlineElement(el: Element, tag: string, ctx: Ctx): void {
    let marks = ctx.marks;
    let href = ctx.href;
    switch (tag) {
      case 'br':
        this.inline(BREAK, ctx);
        return;
      case 'img':
        this.inline({ text: el.attribs.alt ?? '', marks, href }, ctx);
        return;
      case 'input':
        if ((el.attribs.type ?? '').toLowerCase() === 'checkbox')
          this.inline({ text: el.attribs.checked !== undefined ? '☒ ' : '☐ ', marks: NO_MARKS }, ctx);
        return;
      case 'textarea':
        this.inline({ text: textOf(el), marks, href }, ctx);
        return;
      case 'strong':
      case 'b':
        marks = withMark(marks, 'b');
        break;
      case 'em':
      case 'i':
      case 'cite':
      case 'dfn':
      case 'var':
        marks = withMark(marks, 'i');
        break;
      case 'code':
      case 'kbd':
      case 'samp':
      case 'tt':
        marks = withMark(marks, 'code');
        break;
      case 's':
      case 'del':
      case 'strike':
        marks = withMark(marks, 's');
        break;
      case 'sup':
      case 'a': {
        const ref = this.noteRef(el);
        if (ref) {
          this.inline({ text: '', marks: NO_MARKS, note: true }, ctx);
          this.noteQueue.push(ref);
          return;
        }
        if (tag === 'a' && el.attribs.href !== undefined && el.attribs.href.trim() !== '' && !UNSAFE_HREF.test(el.attribs.href))
          href = el.attribs.href;
        break;
      }
      default:
        break;
    }
    const inner = { ...ctx, marks, href };
    if (tag === 'q') this.inline({ text: '“', marks, href }, ctx);
    this.walkAll(el.children, inner);
    if (tag === 'q') this.inline({ text: '”', marks, href }, ctx);
  }

  /** A footnote reference (cmark-gfm / markdown-it / pandoc markup) → the note's <li>. */
  private noteRef(el: Element): Element | undefined {
    if (!this.notes.size) return undefined;
    let a = el;
    if (el.name === 'sup') {
      const tags = el.children.filter((c) => c.type === 'tag') as Element[];
      if (tags.length !== 1 || tags[0]!.name !== 'a') return undefined;
      a = tags[0]!;
    }
    const cls = ` ${el.attribs.class ?? ''} ${a.attribs.class ?? ''} `;
    if (!(cls.includes(' footnote-ref ') || a.attribs['data-footnote-ref'] !== undefined || a.attribs.role === 'doc-noteref')) return undefined;
    const href = a.attribs.href ?? '';
    return href.startsWith('#') ? this.notes.get(decodeURIComponent(href.slice(1))) : undefined;
  }

  /** The notes' blocks, in order of reference (notes referenced from notes follow). */
  renderNotes(): void {
    for (let i = 0; i < this.noteQueue.length && i < 1000; i++) {
      const li = this.noteQueue[i]!;
      const ctx: Ctx = { quote: 0, list: [], marks: NO_MARKS, note: i + 1 };
      this.walkAll(withoutBackrefs(li.children), ctx);
      this.flush();
    }
  }

  finish(): Block[] {
    this.flush();
    return this.blocks;
  }
}

const TABLE_PARTS: Record<string, Set<string>> = {
  table: new Set(['tr', 'thead', 'tbody', 'tfoot', 'caption', 'colgroup', 'col']),
  thead: new Set(['tr']),
  tbody: new Set(['tr']),
  tfoot: new Set(['tr']),
  tr: new Set(['td', 'th']),
};

/** Nodes inside table structure but outside cells, in document order. */
function fosterParented(table: Element): AnyNode[] {
  const out: AnyNode[] = [];
  const visit = (el: Element) => {
    const allowed = TABLE_PARTS[el.name]!;
    for (const c of el.children) {
      if (c.type === 'text') {
        if (/[^ \t\n\r\f]/.test((c as unknown as { data: string }).data)) out.push(c);
      } else if (c.type === 'tag') {
        const e = c as Element;
        if (!allowed.has(e.name)) out.push(e);
        else if (TABLE_PARTS[e.name] && e.name !== 'table') visit(e);
      }
    }
  };
  visit(table);
  return out;
}

function withoutBackrefs(nodes: AnyNode[]): AnyNode[] {
  const out: AnyNode[] = [];
  for (const n of nodes) {
    if (n.type === 'tag') {
      const e = n as Element;
      const cls = ` ${e.attribs.class ?? ''} `;
      if (
        e.name === 'a' &&
        (cls.includes(' footnote-backref ') || e.attribs['data-footnote-backref'] !== undefined || e.attribs.role === 'doc-backlink')
      )
        continue;
      e.children = withoutBackrefs(e.children) as Element['children'];
    }
    out.push(n);
  }
  return out;
}

function isNoteSection(el: Element): boolean {
  const cls = ` ${el.attribs.class ?? ''} `;
  return (el.name === 'section' || el.name === 'div') && (cls.includes(' footnotes ') || el.attribs['data-footnotes'] !== undefined);
}

function withMark(marks: ReadonlySet<Mark>, m: Mark): ReadonlySet<Mark> {
  if (marks.has(m)) return marks;
  const s = new Set(marks);
  s.add(m);
  return s;
}

function descendants(root: Element, name: string): Element[] {
  const out: Element[] = [];
  const stack: AnyNode[] = [...root.children];
  while (stack.length) {
    const n = stack.shift()!;
    if (n.type !== 'tag') continue;
    const e = n as Element;
    if (e.name === name) out.push(e);
    stack.unshift(...e.children);
  }
  return out;
}

function textOf(el: Element): string {
  return el.children.map((c) => (c.type === 'text' ? (c as unknown as { data: string }).data : 'children' in c ? textOf(c as Element) : '')).join('');
}

/** The text of a <pre>: text nodes verbatim, <br> as a line end; hidden elements are skipped. */
function preText(el: Element): string {
  let s = '';
  for (const c of el.children) {
    if (c.type === 'text') s += (c as unknown as { data: string }).data;
    else if (c.type === 'tag') {
      const e = c as Element;
      if (e.name === 'br') s += '\n';
      else if (!HIDDEN.has(e.name)) s += preText(e);
    }
  }
  return s;
}

/** Reference HTML → Word-level blocks (body, then footnotes in order of reference). */
export function normaliseReferenceHtml(html: string): Block[] {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true, decodeEntities: true, recognizeSelfClosing: false });
  const n = new Normaliser();
  n.collectNotes(doc.children);
  n.walkAll(doc.children, { quote: 0, list: [], marks: NO_MARKS, note: 0 });
  n.finish();
  n.renderNotes();
  return n.finish();
}
