/**
 * A DOCX reader for tests: reads a WordprocessingML package (ours or pandoc's) back into the Word-level model of
 * word-model.ts, using only what Word itself would show: paragraph styles (resolved through basedOn), direct
 * and character-style run properties, numbering definitions (format, start, overrides, counters per w:num
 * with deeper levels restarting), indentation, relationships, tables and footnotes.
 *
 * How structure is recovered from a flat run of paragraphs (Word has no nesting):
 * - headings: a style Heading1–6 (by id or by the built-in name "heading n");
 * - code blocks: a paragraph style named Source Code / HTML Preformatted (w:br inside are line ends);
 * - thematic breaks: the HorizontalRule style, a VML horizontal rule (o:hr), or a text-less paragraph with a
 *   top/bottom border;
 * - list items: w:numPr (direct or from the style). The number shown is computed as Word does. A numbering
 *   level that shows nothing (format "none", or a blank level text) is a continuation paragraph at that level;
 * - list continuation: an un-numbered paragraph stays inside the open list while it is indented at least as
 *   far as the text of an open level (the deepest such level is its item); less indentation closes the list;
 * - block quotes: a quote style (Quote, Block Text, Intense Quote) is depth ≥ 1; beyond that, every further
 *   720 twips (0.5", Word's indent step) of left indentation past where the paragraph's list level (or the
 *   margin) puts text is one more level of quoting.
 */
import { strFromU8, unzipSync } from 'fflate';
import { SaxesParser } from 'saxes';
import { BREAK, NO_MARKS, type Block, type Cell, type ListLevel, type Mark, type Row, type Span } from './word-model.js';

// ---- a small namespace-normalising XML tree -----------------------------------------------------------------

export interface XNode {
  name: string; // canonical prefix:local, e.g. w:p
  attrs: Record<string, string>;
  children: Array<XNode | string>;
}

const PREFIX: Record<string, string> = {
  'http://schemas.openxmlformats.org/wordprocessingml/2006/main': 'w',
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships': 'r',
  'http://schemas.openxmlformats.org/package/2006/relationships': 'rel',
  'urn:schemas-microsoft-com:vml': 'v',
  'urn:schemas-microsoft-com:office:office': 'o',
  'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing': 'wp',
  'http://schemas.openxmlformats.org/drawingml/2006/main': 'a',
  'http://schemas.openxmlformats.org/markup-compatibility/2006': 'mc',
};

export function parseXml(xml: string): XNode {
  const parser = new SaxesParser({ xmlns: true });
  const root: XNode = { name: '#root', attrs: {}, children: [] };
  const stack: XNode[] = [root];
  const qname = (uri: string, local: string, fallback: string) => (uri ? `${PREFIX[uri] ?? uri}:${local}` : fallback);
  parser.on('opentag', (tag) => {
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes) as Array<{ uri: string; local: string; name: string; value: string }>) {
      if (a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue;
      attrs[qname(a.uri, a.local, a.local)] = a.value;
    }
    const node: XNode = { name: qname(tag.uri ?? '', tag.local ?? tag.name, tag.name), attrs, children: [] };
    stack[stack.length - 1]!.children.push(node);
    stack.push(node);
  });
  parser.on('closetag', () => void stack.pop());
  parser.on('text', (t) => void stack[stack.length - 1]!.children.push(t));
  parser.on('cdata', (t) => void stack[stack.length - 1]!.children.push(t));
  parser.write(xml).close();
  return root;
}

const kids = (n: XNode | undefined, name?: string): XNode[] =>
  (n?.children.filter((c) => typeof c !== 'string' && (!name || c.name === name)) as XNode[]) ?? [];
const kid = (n: XNode | undefined, name: string): XNode | undefined => kids(n, name)[0];
const textContent = (n: XNode): string => n.children.map((c) => (typeof c === 'string' ? c : textContent(c))).join('');
/** An OOXML on/off property: present and not explicitly false. */
const isOn = (n: XNode | undefined): boolean | undefined => {
  if (!n) return undefined;
  const v = n.attrs['w:val'];
  return !(v === '0' || v === 'false' || v === 'off' || v === 'none');
};

// ---- styles and numbering ----------------------------------------------------------------------------------

interface StyleInfo {
  id: string;
  name: string;
  basedOn?: string;
  rPr?: XNode;
  pPr?: XNode;
}

interface LevelDef {
  fmt: string;
  text: string;
  start: number;
  indent?: number;
}

interface NumDef {
  abstractId: string;
  overrides: Map<number, number>;
}

const MONO = /^(consolas|courier|courier new|menlo|monaco|lucida console|source code pro|dejavu sans mono|liberation mono|monospace)$/i;

class Package {
  readonly styles = new Map<string, StyleInfo>();
  readonly abstracts = new Map<string, Map<number, LevelDef>>();
  readonly nums = new Map<string, NumDef>();
  readonly rels = new Map<string, string>();
  readonly footnotes = new Map<string, XNode>();
  readonly body: XNode;

  constructor(files: Record<string, Uint8Array>) {
    const read = (name: string) => (files[name] ? parseXml(strFromU8(files[name]!)) : undefined);
    const doc = read('word/document.xml');
    if (!doc) throw new Error('not a DOCX: word/document.xml is missing');
    this.body = kid(kid(doc, 'w:document'), 'w:body')!;
    for (const s of kids(kid(read('word/styles.xml'), 'w:styles'), 'w:style')) {
      const id = s.attrs['w:styleId'] ?? '';
      this.styles.set(id, {
        id,
        name: kid(s, 'w:name')?.attrs['w:val'] ?? id,
        basedOn: kid(s, 'w:basedOn')?.attrs['w:val'],
        rPr: kid(s, 'w:rPr'),
        pPr: kid(s, 'w:pPr'),
      });
    }
    const numbering = kid(read('word/numbering.xml'), 'w:numbering');
    for (const an of kids(numbering, 'w:abstractNum')) {
      const levels = new Map<number, LevelDef>();
      for (const lvl of kids(an, 'w:lvl')) {
        levels.set(Number(lvl.attrs['w:ilvl'] ?? 0), {
          fmt: kid(lvl, 'w:numFmt')?.attrs['w:val'] ?? 'decimal',
          text: kid(lvl, 'w:lvlText')?.attrs['w:val'] ?? '',
          start: Number(kid(lvl, 'w:start')?.attrs['w:val'] ?? 0),
          indent: indentOf(kid(lvl, 'w:pPr')),
        });
      }
      this.abstracts.set(an.attrs['w:abstractNumId'] ?? '', levels);
    }
    for (const n of kids(numbering, 'w:num')) {
      const overrides = new Map<number, number>();
      for (const o of kids(n, 'w:lvlOverride')) {
        const so = kid(o, 'w:startOverride');
        if (so) overrides.set(Number(o.attrs['w:ilvl'] ?? 0), Number(so.attrs['w:val'] ?? 0));
      }
      this.nums.set(n.attrs['w:numId'] ?? '', { abstractId: kid(n, 'w:abstractNumId')?.attrs['w:val'] ?? '', overrides });
    }
    for (const r of kids(kid(read('word/_rels/document.xml.rels'), 'rel:Relationships'), 'rel:Relationship')) {
      this.rels.set(r.attrs['Id'] ?? '', r.attrs['Target'] ?? '');
    }
    for (const f of kids(kid(read('word/footnotes.xml'), 'w:footnotes'), 'w:footnote')) {
      this.footnotes.set(f.attrs['w:id'] ?? '', f);
    }
  }

  /** The style and its basedOn ancestors, nearest first (cycle-safe). */
  chain(id: string | undefined): StyleInfo[] {
    const out: StyleInfo[] = [];
    const seen = new Set<string>();
    while (id && !seen.has(id)) {
      seen.add(id);
      const s = this.styles.get(id);
      if (!s) break;
      out.push(s);
      id = s.basedOn;
    }
    return out;
  }

  level(numId: string, ilvl: number): LevelDef | undefined {
    const num = this.nums.get(numId);
    return num ? this.abstracts.get(num.abstractId)?.get(ilvl) : undefined;
  }
}

function indentOf(pPr: XNode | undefined): number | undefined {
  const ind = kid(pPr, 'w:ind');
  const v = ind?.attrs['w:left'] ?? ind?.attrs['w:start'];
  return v === undefined ? undefined : Number(v);
}

// ---- reading ------------------------------------------------------------------------------------------------

interface RunFormat {
  marks: Set<Mark>;
  hidden: boolean;
}

const INDENT_STEP = 720;

class Reader {
  private readonly counters = new Map<string, number[]>();
  /** Open list levels: what each shows and where its text starts. */
  private levels: Array<ListLevel & { textIndent: number; quote: number }> = [];
  private noteQueue: string[] = [];
  readonly blocks: Block[] = [];

  constructor(private readonly pkg: Package) {}

  read(): Block[] {
    this.readBlocks(this.pkg.body, 0);
    // Footnotes in order of reference; a note's own references queue further notes.
    for (let i = 0; i < this.noteQueue.length; i++) {
      const note = this.pkg.footnotes.get(this.noteQueue[i]!);
      this.levels = [];
      if (note) this.readBlocks(note, i + 1);
    }
    return this.blocks;
  }

  private readBlocks(container: XNode, note: number): void {
    for (const n of kids(container)) {
      if (n.name === 'w:p') this.paragraph(n, note);
      else if (n.name === 'w:tbl') this.table(n, note);
      else if (n.name === 'w:sdt') this.readBlocks(kid(n, 'w:sdtContent') ?? n, note);
      else if (n.name === 'w:customXml' || n.name === 'w:ins') this.readBlocks(n, note);
    }
  }

  private styleProp<T>(styleId: string | undefined, pick: (s: StyleInfo) => T | undefined): T | undefined {
    for (const s of this.pkg.chain(styleId)) {
      const v = pick(s);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  private paragraph(p: XNode, note: number): void {
    const pPr = kid(p, 'w:pPr');
    const styleId = kid(pPr, 'w:pStyle')?.attrs['w:val'];
    const names = this.pkg.chain(styleId).flatMap((s) => [s.id.toLowerCase().replace(/\s+/g, ''), s.name.toLowerCase().replace(/\s+/g, '')]);
    const headingMatch = names.map((n) => /^heading([1-9])$/.exec(n)).find(Boolean);
    const isCode = names.some((n) => n === 'sourcecode' || n === 'htmlpreformatted' || n === 'code');
    const isQuote = names.some((n) => n === 'quote' || n === 'blocktext' || n === 'intensequote' || n === 'blockquote');
    const numPr = kid(pPr, 'w:numPr') ?? this.styleProp(styleId, (s) => kid(s.pPr, 'w:numPr'));
    const numId = kid(numPr, 'w:numId')?.attrs['w:val'];
    const ilvl = Number(kid(numPr, 'w:ilvl')?.attrs['w:val'] ?? 0);
    const lvl = numId && numId !== '0' ? this.pkg.level(numId, ilvl) : undefined;
    const directIndent = indentOf(pPr);
    const styleIndent = this.styleProp(styleId, (s) => indentOf(s.pPr));
    const indent = directIndent ?? lvl?.indent ?? styleIndent ?? 0;

    const { spans, hasHr, text } = this.inlines(p, note);
    const borders = kid(pPr, 'w:pBdr') ?? this.styleProp(styleId, (s) => kid(s.pPr, 'w:pBdr'));
    const isHr =
      names.includes('horizontalrule') || hasHr || (!!borders && (!!kid(borders, 'w:bottom') || !!kid(borders, 'w:top')) && !text.trim() && !lvl);

    let list: ListLevel[] = [];
    let head = false;
    let base = 0; // where text would start without any (further) quoting
    let outerQuote = 0; // quoting the list level itself is in
    if (lvl && lvl.fmt !== 'none' && lvl.text.trim() !== '') {
      // A numbered item at level ilvl: advance Word's counter for this w:num, restarting deeper levels.
      const counts = this.counters.get(numId!) ?? [];
      this.counters.set(numId!, counts);
      const num = this.pkg.nums.get(numId!)!;
      const start = num.overrides.get(ilvl) ?? lvl.start;
      counts[ilvl] = counts[ilvl] === undefined ? start : counts[ilvl]! + 1;
      counts.length = ilvl + 1;
      const itemQuote = Math.max(isQuote ? 1 : 0, Math.round((indent - INDENT_STEP * (ilvl + 1)) / INDENT_STEP));
      const mine = { kind: lvl.fmt === 'bullet' ? ('u' as const) : ('o' as const), textIndent: indent, quote: itemQuote };
      const levels = this.levels.slice(0, ilvl);
      while (levels.length < ilvl) levels.push({ kind: 'u', textIndent: INDENT_STEP * (levels.length + 1), quote: 0 });
      levels.push(mine.kind === 'o' ? { ...mine, ordinal: counts[ilvl] } : mine);
      this.levels = levels;
      list = levels.map(({ kind, ordinal }) => (kind === 'o' ? { kind, ordinal } : { kind }));
      head = true;
      base = INDENT_STEP * (ilvl + 1);
    } else if (lvl && this.levels.length) {
      // A level that shows no marker (pandoc's continuation paragraphs): the item at that level goes on.
      this.levels = this.levels.slice(0, ilvl + 1);
      list = this.levels.map(({ kind, ordinal }) => (kind === 'o' ? { kind, ordinal } : { kind }));
      base = this.levels[this.levels.length - 1]!.textIndent;
      outerQuote = this.levels[this.levels.length - 1]!.quote;
    } else if (this.levels.length) {
      // A quote-styled paragraph inside an item of an unquoted list is indented one step past the item's text;
      // at the item's text it is a quote after the list.
      let d = this.levels.length - 1;
      const need = (l: { textIndent: number; quote: number }) => l.textIndent + (isQuote && l.quote === 0 ? INDENT_STEP : 0);
      while (d >= 0 && indent < need(this.levels[d]!)) d--;
      this.levels = this.levels.slice(0, d + 1);
      list = this.levels.map(({ kind, ordinal }) => (kind === 'o' ? { kind, ordinal } : { kind }));
      base = d >= 0 ? this.levels[d]!.textIndent : 0;
      outerQuote = d >= 0 ? this.levels[d]!.quote : 0;
    } else {
      this.levels = [];
    }
    let quote = outerQuote + Math.max(0, Math.round((indent - base) / INDENT_STEP));
    if (isQuote) quote = Math.max(1, quote);

    const block: Block = { kind: 'p', quote, list, head, note, spans };
    if (isHr) {
      block.kind = 'hr';
      delete block.spans;
    } else if (headingMatch) {
      const level = Number(headingMatch[1]);
      if (level <= 6) {
        block.kind = 'h';
        block.level = level;
      }
    } else if (isCode) {
      block.kind = 'code';
      block.text = text;
      delete block.spans;
    } else if (!head && !spans.some((s) => s.note || s.br || /[^ \t\n\r\f]/.test(s.text))) {
      return; // an empty paragraph is spacing, not content
    }
    this.blocks.push(block);
  }

  /** Runs of a paragraph (through hyperlinks, insertions, smart tags, fields' results) → spans. */
  private inlines(p: XNode, _note: number): { spans: Span[]; hasHr: boolean; text: string } {
    const spans: Span[] = [];
    let hasHr = false;
    let text = '';
    const walk = (n: XNode, href: string | undefined) => {
      for (const c of kids(n)) {
        switch (c.name) {
          case 'w:r':
            run(c, href);
            break;
          case 'w:hyperlink': {
            const id = c.attrs['r:id'];
            const target = id ? this.pkg.rels.get(id) : c.attrs['w:anchor'] !== undefined ? `#${c.attrs['w:anchor']}` : undefined;
            // An empty target leads nowhere: not a link (the normaliser's rule for href="" too).
            walk(c, target?.trim() ? target : href);
            break;
          }
          case 'w:ins':
          case 'w:smartTag':
          case 'w:customXml':
          case 'w:fldSimple':
          case 'w:sdtContent':
          case 'w:sdt':
            walk(c, href);
            break;
          default:
            break; // pPr, bookmarks, w:del (deleted text is not shown), proofing marks
        }
      }
    };
    const run = (r: XNode, href: string | undefined) => {
      const fmt = this.runFormat(kid(r, 'w:rPr'));
      if (fmt.hidden) return;
      const push = (t: string, extra?: Partial<Span>) => {
        text += t;
        spans.push({ text: t, marks: fmt.marks, href, ...extra });
      };
      for (const c of kids(r)) {
        switch (c.name) {
          case 'w:t':
            push(textContent(c));
            break;
          case 'w:tab':
            push('\t');
            break;
          case 'w:br':
            if (!c.attrs['w:type'] || c.attrs['w:type'] === 'textWrapping') push('\n', { text: '', br: true });
            break;
          case 'w:cr':
            push('\n', { text: '', br: true });
            break;
          case 'w:noBreakHyphen':
            push('-');
            break;
          case 'w:sym':
            push(String.fromCharCode(parseInt(c.attrs['w:char'] ?? '20', 16)));
            break;
          case 'w:footnoteReference': {
            const id = c.attrs['w:id'] ?? '';
            this.noteQueue.push(id);
            spans.push({ text: '', marks: NO_MARKS, note: true });
            break;
          }
          case 'w:drawing': {
            // An image reads as its description, as HTML's <img> does without the picture.
            const docPr = findDeep(c, 'wp:docPr');
            push(docPr?.attrs['descr'] ?? '');
            break;
          }
          case 'w:pict':
            if (findDeep(c, 'v:rect')?.attrs['o:hr'] === 't') hasHr = true;
            break;
          default:
            break; // footnoteRef (the note's own number), fldChar, instrText, lastRenderedPageBreak …
        }
      }
    };
    walk(p, undefined);
    return { spans, hasHr, text };
  }

  private runFormat(rPr: XNode | undefined): RunFormat {
    const marks = new Set<Mark>();
    const styleId = kid(rPr, 'w:rStyle')?.attrs['w:val'];
    const chain = this.pkg.chain(styleId);
    const prop = (name: string): boolean | undefined => {
      const direct = isOn(kid(rPr, name));
      if (direct !== undefined) return direct;
      for (const s of chain) {
        const v = isOn(kid(s.rPr, name));
        if (v !== undefined) return v;
      }
      return undefined;
    };
    if (prop('w:b')) marks.add('b');
    if (prop('w:i')) marks.add('i');
    if (prop('w:strike') || prop('w:dstrike')) marks.add('s');
    const styleNames = chain.map((s) => s.name.toLowerCase().replace(/\s+/g, ''));
    const font = kid(rPr, 'w:rFonts')?.attrs['w:ascii'] ?? chain.map((s) => kid(s.rPr, 'w:rFonts')?.attrs['w:ascii']).find(Boolean);
    if (styleNames.some((n) => n === 'verbatimchar' || n === 'htmlcode' || n === 'sourcecode') || (font && MONO.test(font))) marks.add('code');
    return { marks, hidden: !!prop('w:vanish') };
  }

  private table(tbl: XNode, note: number): void {
    const tblPr = kid(tbl, 'w:tblPr');
    const indent = Number(kid(tblPr, 'w:tblInd')?.attrs['w:w'] ?? 0);
    let d = this.levels.length - 1;
    while (d >= 0 && indent < this.levels[d]!.textIndent) d--;
    this.levels = this.levels.slice(0, d + 1);
    const base = d >= 0 ? this.levels[d]!.textIndent : 0;
    const outerQuote = d >= 0 ? this.levels[d]!.quote : 0;
    const list = this.levels.map(({ kind, ordinal }) => (kind === 'o' ? { kind, ordinal } : { kind }));
    const rows: Row[] = [];
    for (const tr of kids(tbl, 'w:tr')) {
      const header = !!isOn(kid(kid(tr, 'w:trPr'), 'w:tblHeader'));
      const cells: Cell[] = [];
      for (const tc of kids(tr, 'w:tc')) {
        const vMerge = kid(kid(tc, 'w:tcPr'), 'w:vMerge');
        if (vMerge && vMerge.attrs['w:val'] !== 'restart') continue; // covered by the cell above
        const spans: Span[] = [];
        let align: Cell['align'] = '';
        kids(tc, 'w:p').forEach((p, i) => {
          if (i === 0) {
            const jc =
              kid(kid(p, 'w:pPr'), 'w:jc')?.attrs['w:val'] ??
              this.styleProp(kid(kid(p, 'w:pPr'), 'w:pStyle')?.attrs['w:val'], (s) => kid(s.pPr, 'w:jc')?.attrs['w:val']);
            align = jc === 'center' ? 'center' : jc === 'right' || jc === 'end' ? 'right' : jc === 'both' ? 'justify' : '';
          } else spans.push(BREAK);
          spans.push(...this.inlines(p, note).spans);
        });
        // Header cells are bold in Word and in browsers alike; boldness there says nothing.
        cells.push({ align, spans: header ? spans.map((s) => withoutBold(s)) : spans });
      }
      rows.push({ header, cells });
    }
    this.blocks.push({ kind: 'table', quote: outerQuote + Math.max(0, Math.round((indent - base) / INDENT_STEP)), list, head: false, note, rows });
  }
}

export function withoutBold(s: Span): Span {
  if (!s.marks.has('b')) return s;
  const marks = new Set(s.marks);
  marks.delete('b');
  return { ...s, marks };
}

function findDeep(n: XNode, name: string): XNode | undefined {
  for (const c of kids(n)) {
    if (c.name === name) return c;
    const f = findDeep(c, name);
    if (f) return f;
  }
  return undefined;
}

/** DOCX bytes → Word-level blocks (body, then footnotes in order of reference). */
export function readDocx(docx: Uint8Array): Block[] {
  return new Reader(new Package(unzipSync(docx))).read();
}
