/**
 * A paragraph's content → inlines: runs with their marks (character style, then direct properties), text,
 * tabs and breaks, hyperlinks (relationship targets and anchors), complex and simple fields (HYPERLINK
 * becomes a link, any other field keeps its result text, instructions are never text), tracked changes as
 * accepted (insertions and moves-to kept, deletions and moves-from dropped), pictures (DrawingML and VML),
 * note references, checkbox content controls, equations (src/docx/math: OMML read into their structure).
 * Comments are dropped.
 *
 * Text boxes cannot sit inside a paragraph in the model: their content is handed back in `floating`, for
 * the block reader to place before the paragraph (anchored ahead of its text) or after it.
 */
import { readOmml } from '../math/omml-read.js';
import { attr, child, decodeXml, type XElement, type XNode } from '../xml.js';
import { nestedTooDeeply, type ReadContext } from './context.js';
import { drawingShapes, vmlShapes, type Shape } from './drawings.js';
import { symbolChar, symbolFont, symbolText } from './symbol-fonts.js';

type SymbolFont = NonNullable<ReturnType<typeof symbolFont>>;
import type { Inline, Marks } from './model.js';
import { rPrMarks } from './styles.js';

interface Frame {
  kind: 'root' | 'link' | 'field';
  items: Inline[];
  /** Fields: instruction text until `separate`, then the result. */
  phase?: 'instr' | 'result';
  instr?: string;
  href?: string;
  title?: string;
}

/**
 * Link targets the writers may emit: relative references, anchors and any scheme except those that run code
 * or reach local data in a browser (javascript:, vbscript:, data:, file:, blob:). Those are dropped, their
 * text kept.
 */
const UNSAFE_SCHEME = /^(javascript|vbscript|data|file|blob|livescript|mocha):/i;

export function safeHref(target: string): string | undefined {
  // Browsers ignore tabs, new lines and other controls inside a scheme ("java\tscript:"): removed first.
  // eslint-disable-next-line no-control-regex
  const t = target.trim().replace(/[\u0000-\u001f\u007f]/g, '');
  if (t.startsWith('#')) return t.length > 1 ? t : undefined;
  if (t === '' || UNSAFE_SCHEME.test(t.replace(/\s/g, ''))) return undefined;
  return t;
}

const EMU_PER_PX = 9525;

export interface Floating {
  content: XElement;
  before: boolean;
}
/** Open links and fields in one paragraph (Word nests a handful: TOC → hyperlink → PAGEREF). */
const MAX_FRAMES = 16;

export class InlineReader {
  private readonly stack: Frame[] = [{ kind: 'root', items: [] }];
  /** Text boxes (w:txbxContent) met in this paragraph; `before`: anchored ahead of its text. */
  readonly floating: Floating[] = [];
  private unsafeLinks = 0;
  /** Field begins past MAX_FRAMES, whose separate/end marks are skipped too. */
  private ignoredFields = 0;

  constructor(private readonly ctx: ReadContext) {}

  /** Reads the content of one w:p (or any element holding runs) and returns its inlines. */
  static read(ctx: ReadContext, p: XElement): { inlines: Inline[]; floating: Floating[] } {
    const r = new InlineReader(ctx);
    r.children(p.children, 0);
    return { inlines: r.finish(), floating: r.floating };
  }

  private finish(): Inline[] {
    while (this.stack.length > 1) this.pop();
    if (this.unsafeLinks)
      this.ctx.warn(`${this.unsafeLinks} link(s) to javascript:, vbscript:, data:, file: or blob: targets were dropped (their text kept)`);
    return this.stack[0]!.items;
  }

  /** Where content goes now; undefined while a field's instruction is being read. */
  private target(): Inline[] | undefined {
    const top = this.stack[this.stack.length - 1]!;
    return top.kind === 'field' && top.phase === 'instr' ? undefined : top.items;
  }

  private push(i: Inline): void {
    this.ctx.count();
    const t = this.target();
    if (!t) return;
    const last = t[t.length - 1];
    if (i.t === 'text' && last?.t === 'text' && sameMarks(last.m, i.m)) last.text += i.text;
    else t.push(i);
  }

  private pop(): void {
    const f = this.stack.pop()!;
    let href = f.href;
    let title = f.title;
    if (f.kind === 'field') {
      const h = parseHyperlinkField(f.instr ?? '');
      href = h?.href;
      title = h?.title;
    }
    // A link inside a link (a TOC entry's page-number field inside its hyperlink) is not a link of its own:
    // neither Markdown nor HTML nests them.
    const nested = this.stack.some(
      (o) => (o.kind === 'link' && o.href !== undefined) || (o.kind === 'field' && parseHyperlinkField(o.instr ?? '')?.href),
    );
    if (href !== undefined && !nested) {
      const safe = safeHref(href);
      if (safe && f.items.length > 0) return this.push({ t: 'link', href: safe, title, children: f.items });
      if (!safe) this.unsafeLinks++;
    }
    for (const i of f.items) this.push(i);
  }

  private children(nodes: XNode[], depth: number): void {
    if (depth > this.ctx.limits.maxDepth) throw nestedTooDeeply(this.ctx.limits.maxDepth);
    for (const n of nodes) if (n.type === 'el') this.element(n, depth + 1);
  }

  private element(e: XElement, depth: number): void {
    switch (e.name) {
      case 'w:r':
        return this.run(e, depth);
      case 'w:hyperlink': {
        const rid = attr(e, 'r:id');
        const anchor = attr(e, 'w:anchor');
        const rel = rid ? this.ctx.rels.get(rid) : undefined;
        let href: string | undefined = rel?.target;
        if (anchor) href = (href ?? '') + '#' + anchor;
        const tip = attr(e, 'w:tooltip');
        this.stack.push({ kind: 'link', items: [], href, title: tip });
        const mark = this.stack.length;
        this.children(e.children, depth);
        while (this.stack.length > mark) this.pop(); // fields left open inside the link
        return this.pop();
      }
      case 'w:fldSimple': {
        this.stack.push({ kind: 'field', items: [], phase: 'result', instr: attr(e, 'w:instr') ?? '' });
        const mark = this.stack.length;
        this.children(e.children, depth);
        while (this.stack.length > mark) this.pop();
        return this.pop();
      }
      case 'w:sdt': {
        const pr = child(e, 'w:sdtPr');
        const box = pr && child(pr, 'w14:checkbox');
        if (box) {
          const checked = child(box, 'w14:checked');
          return this.push({ t: 'check', checked: !!checked && /^(1|true)$/.test(attr(checked, 'w14:val') ?? '1') });
        }
        const content = child(e, 'w:sdtContent');
        return content ? this.children(content.children, depth) : undefined;
      }
      case 'w:ins':
      case 'w:moveTo':
      case 'w:smartTag':
      case 'w:customXml':
      case 'w:dir':
      case 'w:bdo':
      case 'w:sdtContent':
        return this.children(e.children, depth);
      case 'mc:AlternateContent':
        return this.alternate(e, depth, (c) => this.children(c, depth));
      case 'w:bookmarkStart': {
        const name = attr(e, 'w:name');
        // _GoBack is Word's "last edit position", not a target.
        return name && name !== '_GoBack' && name.length <= 255 ? this.push({ t: 'anchor', name }) : undefined;
      }
      case 'm:oMath':
      case 'm:oMathPara':
        return this.math(e);
      default:
        return; // w:del, w:moveFrom, comments, bookmarks, proofing marks, w:pPr
    }
  }

  /** The first mc:Choice (DrawingML pictures and text boxes), else the fallback. */
  private alternate(e: XElement, _depth: number, go: (nodes: XNode[]) => void): void {
    const choice = child(e, 'mc:Choice') ?? child(e, 'mc:Fallback');
    if (choice) go(choice.children);
  }

  /** Each equation of an m:oMath (inline) or m:oMathPara (display, one per m:oMath) is an inline of its own. */
  private math(e: XElement): void {
    for (const eq of readOmml(e, { count: this.ctx.count, warn: this.ctx.warn })) this.push({ t: 'math', display: eq.display, row: eq.row });
  }

  private marks(rPr: XElement | undefined): Marks {
    const out: Marks = {};
    const rStyle = rPr && child(rPr, 'w:rStyle');
    const styleId = rStyle && attr(rStyle, 'w:val');
    if (styleId) Object.assign(out, this.ctx.styles.character(styleId));
    const direct = rPrMarks(rPr);
    for (const k of ['b', 'i', 's', 'u', 'code', 'sup', 'sub'] as const) {
      if (direct[k]) out[k] = true;
      if (direct.off?.has(k)) delete out[k];
    }
    if (direct.color) out.color = direct.color as string;
    if (direct.size) out.size = direct.size as number;
    if (direct.highlight) out.highlight = direct.highlight as string;
    return out;
  }

  private run(r: XElement, depth: number): void {
    const rPr = child(r, 'w:rPr');
    const fonts = rPr && child(rPr, 'w:rFonts');
    const font = fonts && symbolFont(attr(fonts, 'w:ascii') ?? attr(fonts, 'w:hAnsi'));
    this.runContent(r.children, this.marks(rPr), depth, font);
  }

  /** A w:sym: a character of a symbol font (symbol-fonts.ts); ballot boxes of Wingdings are checkboxes. */
  private sym(c: XElement, text: (s: string) => void): void {
    const code = parseInt(attr(c, 'w:char') ?? '', 16);
    if (!(code > 0 && code <= 0xffff)) return;
    const fontName = attr(c, 'w:font')?.trim().toLowerCase();
    const font = symbolFont(fontName);
    const pos = code & 0xff;
    if (fontName === undefined || fontName === 'wingdings') {
      if (code === 0xf0a8 || code === 0xf06f) return this.push({ t: 'check', checked: false });
      if (code === 0xf0fe || code === 0xf078 || code === 0xf0fd) return this.push({ t: 'check', checked: true });
    }
    if (fontName === 'wingdings 2' && code >= 0xf000) {
      if (pos === 0xa3) return this.push({ t: 'check', checked: false });
      if (pos === 0x52 || pos === 0x53 || pos === 0x54) return this.push({ t: 'check', checked: true });
    }
    if (font) text(symbolChar(font, code));
    else if (code < 0xe000) text(String.fromCharCode(code));
  }

  private runContent(nodes: XNode[], m: Marks, depth: number, font?: SymbolFont): void {
    const text = (s: string) => s && this.push({ t: 'text', text: s, m });
    for (const c of nodes) {
      if (c.type !== 'el') continue;
      switch (c.name) {
        case 'w:t': {
          const s = c.children.map((t) => (t.type === 'text' ? decodeXml(t.raw) : '')).join('');
          text(font ? symbolText(font, s) : s);
          break;
        }
        case 'w:tab':
        case 'w:ptab':
          text('\t');
          break;
        case 'w:br': {
          const type = attr(c, 'w:type');
          if (type !== 'page' && type !== 'column') this.push({ t: 'br' });
          break;
        }
        case 'w:cr':
          this.push({ t: 'br' });
          break;
        case 'w:noBreakHyphen':
          text('-');
          break;
        case 'w:sym':
          this.sym(c, text);
          break;
        case 'w:instrText': {
          const top = this.stack[this.stack.length - 1]!;
          if (top.kind === 'field' && top.phase === 'instr') top.instr += c.children.map((t) => (t.type === 'text' ? decodeXml(t.raw) : '')).join('');
          break;
        }
        case 'w:fldChar':
          this.fieldChar(attr(c, 'w:fldCharType'));
          break;
        case 'w:footnoteReference':
        case 'w:endnoteReference': {
          const id = attr(c, 'w:id');
          const kind = c.name === 'w:footnoteReference' ? 'footnote' : 'endnote';
          if (id !== undefined) {
            this.push({ t: 'note', kind, id });
            this.ctx.noteRefs.push({ kind, id });
          }
          break;
        }
        case 'w:drawing':
          this.shapes(drawingShapes(c));
          break;
        case 'w:pict':
        case 'w:object':
          this.shapes(vmlShapes(c));
          break;
        case 'mc:AlternateContent':
          if (depth < this.ctx.limits.maxDepth) this.alternate(c, depth, (inner) => this.runContent(inner, m, depth + 1, font));
          break;
        case 'w:ruby': {
          const base = child(c, 'w:rubyBase');
          if (base) this.children(base.children, depth);
          break;
        }
        default:
          break; // w:delText, w:rPr, w:footnoteRef, comment references, w:lastRenderedPageBreak...
      }
    }
  }

  private fieldChar(type: string | undefined): void {
    // Fields nested beyond a few levels are read as plain content (a hostile run of begins must not build a
    // deep frame stack that every later close walks).
    if (this.ignoredFields > 0 && type !== 'begin') {
      if (type === 'end') this.ignoredFields--;
      return;
    }
    if (type === 'begin') {
      if (this.stack.length >= MAX_FRAMES) this.ignoredFields++;
      else this.stack.push({ kind: 'field', items: [], phase: 'instr', instr: '' });
      return;
    }
    let idx = this.stack.length - 1;
    while (idx >= 0 && this.stack[idx]!.kind !== 'field') idx--;
    if (idx < 0) return; // a field begun in an earlier paragraph (TOC): its result is plain content here
    if (type === 'separate') {
      this.stack[idx]!.phase = 'result';
      return;
    }
    if (type === 'end') while (this.stack.length > idx) this.pop();
  }

  /**
   * A drawing's pictures become images where it stands; its text boxes are handed to the block reader, marked
   * `before` when nothing of the paragraph's text precedes them (drawings.ts finds every one, in order).
   */
  private shapes(shapes: Shape[]): void {
    for (const s of shapes) {
      if (!this.ctx.shape()) return;
      if (s.kind === 'box') {
        const before = this.stack.length === 1 && this.stack[0]!.items.every((i) => i.t === 'anchor' || (i.t === 'text' && !/\S/.test(i.text)));
        this.floating.push({ content: s.content, before });
        continue;
      }
      this.push({
        t: 'image',
        alt: s.alt,
        data: s.rId ? this.ctx.image(s.rId) : undefined,
        widthPx: s.cx ? Math.round(s.cx / EMU_PER_PX) : undefined,
        heightPx: s.cy ? Math.round(s.cy / EMU_PER_PX) : undefined,
      });
    }
  }
}

function sameMarks(a: Marks, b: Marks): boolean {
  return (
    a.b === b.b &&
    a.i === b.i &&
    a.s === b.s &&
    a.u === b.u &&
    a.code === b.code &&
    a.sup === b.sup &&
    a.sub === b.sub &&
    a.color === b.color &&
    a.size === b.size &&
    a.highlight === b.highlight
  );
}

/**
 * `HYPERLINK "url" \l "anchor" \o "tip"` → href and title; `PAGEREF name \h` and `REF name \h` (a
 * cross-reference made a link) → `#name`; undefined for any other field.
 */
export function parseHyperlinkField(instr: string): { href?: string; title?: string } | undefined {
  const tokens: string[] = [];
  // A field instruction is a short, flat token list (quoted strings and switches); not XML.
  for (const m of instr.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) tokens.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  const kind = tokens[0]?.toUpperCase();
  if ((kind === 'PAGEREF' || kind === 'REF') && tokens[1] && tokens.slice(2).some((t) => t.toLowerCase() === '\\h')) return { href: '#' + tokens[1] };
  if (kind !== 'HYPERLINK') return undefined;
  let href: string | undefined;
  let anchor: string | undefined;
  let title: string | undefined;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '\\l') anchor = tokens[++i];
    else if (t === '\\o') title = tokens[++i];
    else if (/^\\[a-z]$/i.test(t)) {
      if (t === '\\t' || t === '\\m') i++;
    } else href ??= t;
  }
  if (anchor) href = (href ?? '') + '#' + anchor;
  return href === undefined ? {} : { href, title };
}
