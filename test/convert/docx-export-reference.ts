/**
 * What a DOCX holds, read straight from its WordprocessingML: the reference that Folio's and pandoc's
 * DOCX → Markdown/HTML exports are both scored against (test/convert/docx-export-corpus.test.ts,
 * scripts/docx-export-vs-pandoc.ts). It shares no code with the exporter under test (src/docx/read,
 * src/convert/docx-*.ts): only the test XML tree of docx-reader.ts.
 *
 * What counts, and why:
 * - text: every w:t Word shows of the body and of the foot/endnotes it references (text boxes included, one
 *   branch of each mc:AlternateContent, field results but not field codes; deleted and moved-away text and
 *   hidden runs left out; tracked changes accepted, so a deleted paragraph mark joins two paragraphs, and a drop
 *   cap joins the paragraph it starts). Headers, footers and comments are not part of a Markdown or HTML export.
 * - headings: paragraphs whose style (or a style it is based on) is "heading 1"–"heading 6", keyed by level and
 *   their words, as pandoc and Word's own outline read them.
 * - list items: paragraphs numbered through w:numPr (direct or from their style; not headings) at a level that
 *   shows a marker, keyed by kind (bullet or ordered) and depth (ilvl + 1).
 * - tables: every w:tbl (nested ones too) with rows (w:tr) × columns (the widest row: grid span plus
 *   gridBefore/gridAfter).
 * - emphasis: the words of runs bold / italic / struck through by direct formatting or their character style
 *   (not the paragraph style: a heading's or a title's bold is the style, not emphasis), outside headings.
 * - links: w:hyperlink and HYPERLINK fields that show text; external ones by address, internal ones (bookmark
 *   anchors, which an export may rename) all as '#'.
 * - notes: footnote and endnote references.
 */
import { strFromU8, unzipSync } from 'fflate';
import { parseXml, type XNode } from './docx-reader.js';
import { normalizeHref } from './word-model.js';

export interface Extract {
  words: string[];
  headings: string[];
  items: string[];
  tables: string[];
  strong: string[];
  em: string[];
  strike: string[];
  links: string[];
  notes: number;
}

export const emptyExtract = (): Extract => ({ words: [], headings: [], items: [], tables: [], strong: [], em: [], strike: [], links: [], notes: 0 });

/** Words as both sides are compared: NFKC, lower case, runs of letters, digits and combining marks. */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? []
  );
}

/** A link target as both sides are compared: internal targets are one key, external ones normalised. */
export function linkKey(href: string): string {
  let h = href.trim();
  if (h.startsWith('#')) return '#';
  try {
    // "http://a.com" and "http://a.com/" are one address; URL gives both the same form.
    const u = new URL(h);
    if (u.protocol === 'http:' || u.protocol === 'https:') h = u.href;
  } catch {
    /* relative or not a URL: compared as written */
  }
  return normalizeHref(h);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
/** ISO 29500 Strict names → Transitional (mammoth--strict-format.docx), so one reader handles both. */
const STRICT: Array<[string, string]> = [
  ['http://purl.oclc.org/ooxml/wordprocessingml/main', W],
  ['http://purl.oclc.org/ooxml/officeDocument/relationships', R],
];

const kids = (n: XNode | undefined, name?: string): XNode[] =>
  (n?.children.filter((c) => typeof c !== 'string' && (!name || c.name === name)) as XNode[]) ?? [];
const kid = (n: XNode | undefined, name: string): XNode | undefined => kids(n, name)[0];
const textOf = (n: XNode): string => n.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
const isOn = (n: XNode | undefined): boolean | undefined => {
  if (!n) return undefined;
  const v = n.attrs['w:val'];
  return !(v === '0' || v === 'false' || v === 'off' || v === 'none');
};

interface Style {
  name: string;
  basedOn?: string;
  rPr?: XNode;
  pPr?: XNode;
}

interface Field {
  instr: string;
  result: boolean;
  link?: string;
  textAtSeparate: number;
}

interface Segment {
  text: string;
  b: boolean;
  i: boolean;
  s: boolean;
}

class ReferenceReader {
  readonly out = emptyExtract();
  private readonly styles = new Map<string, Style>();
  private readonly levels = new Map<string, { fmt: string; text: string }>(); // `${numId}/${ilvl}`
  /** The relationships of the part being read (the main part, then the notes part). */
  private rels: Map<string, string>;
  private readonly notes = new Map<string, { node: XNode; rels: Map<string, string> }>(); // 'f12' / 'e3'
  private readonly noteQueue: string[] = [];
  private readonly fields: Field[] = [];
  /** The list levels open in the current run of list items (see paragraph()). */
  private open: number[] = [];
  /**
   * Text that joins the next paragraph: a drop cap's letter (Word draws it as part of the first word) or a
   * paragraph whose mark is a tracked deletion.
   */
  private dropCap: Segment[] = [];
  private body: XNode | undefined;
  /** Text emitted so far in the current paragraph chain (to tell whether a link showed anything). */
  private emitted = 0;

  constructor(files: Record<string, Uint8Array>) {
    const xml = (name: string | undefined): XNode | undefined => {
      const bytes = name ? files[name] : undefined;
      if (!bytes) return undefined;
      let s = strFromU8(bytes).replace(/^\uFEFF/, '');
      for (const [from, to] of STRICT) s = s.split(from).join(to);
      return parseXml(s);
    };
    const rootRels = kids(kid(xml('_rels/.rels'), 'rel:Relationships'), 'rel:Relationship');
    const main = (rootRels.find((r) => /\/officeDocument$/.test(r.attrs['Type'] ?? ''))?.attrs['Target'] ?? 'word/document.xml').replace(/^\//, '');
    const dir = main.includes('/') ? main.slice(0, main.lastIndexOf('/') + 1) : '';
    // Each part has its own relationships (a note's hyperlink resolves in footnotes.xml.rels).
    const relsOf = (part: string) => {
      const d = part.includes('/') ? part.slice(0, part.lastIndexOf('/') + 1) : '';
      return kids(kid(xml(`${d}_rels/${part.slice(d.length)}.rels`), 'rel:Relationships'), 'rel:Relationship');
    };
    const partOf = (type: string): string | undefined => {
      const t = relsOf(main).find((x) => (x.attrs['Type'] ?? '').endsWith(`/${type}`))?.attrs['Target'];
      return t ? (t.startsWith('/') ? t.slice(1) : dir + t) : undefined;
    };
    const relMap = (part: string | undefined) => new Map((part ? relsOf(part) : []).map((r) => [r.attrs['Id'] ?? '', r.attrs['Target'] ?? '']));
    this.rels = relMap(main);
    this.body = kid(kid(xml(main), 'w:document'), 'w:body');
    for (const s of kids(kid(xml(partOf('styles')), 'w:styles'), 'w:style')) {
      this.styles.set(s.attrs['w:styleId'] ?? '', {
        name: kid(s, 'w:name')?.attrs['w:val'] ?? '',
        basedOn: kid(s, 'w:basedOn')?.attrs['w:val'],
        rPr: kid(s, 'w:rPr'),
        pPr: kid(s, 'w:pPr'),
      });
    }
    const numbering = kid(xml(partOf('numbering')), 'w:numbering');
    const abstracts = new Map<string, XNode>();
    for (const a of kids(numbering, 'w:abstractNum')) abstracts.set(a.attrs['w:abstractNumId'] ?? '', a);
    for (const n of kids(numbering, 'w:num')) {
      let a = abstracts.get(kid(n, 'w:abstractNumId')?.attrs['w:val'] ?? '');
      // A numbering style link (w:numStyleLink) points at the abstract that holds the levels.
      const link = kid(a, 'w:numStyleLink')?.attrs['w:val'];
      if (link) {
        const numId = kid(kid(this.styles.get(link)?.pPr, 'w:numPr'), 'w:numId')?.attrs['w:val'];
        const target = kids(numbering, 'w:num').find((x) => x.attrs['w:numId'] === numId);
        a = abstracts.get(kid(target, 'w:abstractNumId')?.attrs['w:val'] ?? '') ?? a;
      }
      const lvls = new Map<string, XNode>();
      for (const l of kids(a, 'w:lvl')) lvls.set(l.attrs['w:ilvl'] ?? '0', l);
      for (const o of kids(n, 'w:lvlOverride')) {
        const l = kid(o, 'w:lvl');
        if (l) lvls.set(o.attrs['w:ilvl'] ?? '0', l);
      }
      for (const [ilvl, l] of lvls) {
        this.levels.set(`${n.attrs['w:numId']}/${ilvl}`, {
          fmt: kid(l, 'w:numFmt')?.attrs['w:val'] ?? 'decimal',
          text: kid(l, 'w:lvlText')?.attrs['w:val'] ?? '',
        });
      }
    }
    for (const [part, tag, key] of [
      ['footnotes', 'w:footnote', 'f'],
      ['endnotes', 'w:endnote', 'e'],
    ] as const) {
      const name = partOf(part);
      const rels = relMap(name);
      for (const n of kids(kid(xml(name), `w:${part}`), tag)) this.notes.set(key + (n.attrs['w:id'] ?? ''), { node: n, rels });
    }
  }

  read(): Extract {
    if (!this.body) throw new Error('no w:body in the main document part');
    this.blocks(this.body);
    for (let i = 0; i < this.noteQueue.length; i++) {
      const n = this.notes.get(this.noteQueue[i]!);
      this.open = [];
      if (!n) continue;
      this.rels = n.rels;
      this.blocks(n.node);
    }
    return this.out;
  }

  private chain(id: string | undefined): Style[] {
    const out: Style[] = [];
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

  private blocks(container: XNode): void {
    for (const n of kids(container)) {
      switch (n.name) {
        case 'w:p':
          this.paragraph(n);
          break;
        case 'w:tbl':
          this.table(n);
          break;
        case 'w:sdt':
          this.blocks(kid(n, 'w:sdtContent') ?? n);
          break;
        case 'w:customXml':
        case 'w:ins':
        case 'w:moveTo':
        case 'w:txbxContent':
          this.blocks(n);
          break;
        case 'mc:AlternateContent':
          this.blocks(kid(n, 'mc:Choice') ?? n);
          break;
        default:
          break; // sectPr, bookmarks, w:del, w:moveFrom, mc:Fallback
      }
    }
  }

  private table(tbl: XNode): void {
    const rows: XNode[] = [];
    const collect = (n: XNode, into: XNode[], name: string) => {
      for (const c of kids(n)) {
        if (c.name === name) into.push(c);
        else if (c.name === 'w:sdt') collect(kid(c, 'w:sdtContent') ?? c, into, name);
        else if (c.name === 'w:customXml') collect(c, into, name);
      }
    };
    collect(tbl, rows, 'w:tr');
    let cols = 0;
    const cells: XNode[] = [];
    for (const tr of rows) {
      const trPr = kid(tr, 'w:trPr');
      let width = Number(kid(trPr, 'w:gridBefore')?.attrs['w:val'] ?? 0) + Number(kid(trPr, 'w:gridAfter')?.attrs['w:val'] ?? 0);
      const tcs: XNode[] = [];
      collect(tr, tcs, 'w:tc');
      for (const tc of tcs) width += Number(kid(kid(tc, 'w:tcPr'), 'w:gridSpan')?.attrs['w:val'] ?? 1);
      cols = Math.max(cols, width);
      cells.push(...tcs);
    }
    if (rows.length) this.out.tables.push(`${rows.length}x${cols}`);
    for (const tc of cells) {
      this.open = [];
      this.blocks(tc);
    }
    this.open = [];
  }

  private paragraph(p: XNode): void {
    const pPr = kid(p, 'w:pPr');
    const styleId = kid(pPr, 'w:pStyle')?.attrs['w:val'];
    const chain = this.chain(styleId);
    const heading = chain
      .map((s) => /^heading\s*([1-9])$/i.exec(s.name.trim()))
      .find(Boolean)
      ?.map(Number)[1];
    const segments: Segment[] = this.dropCap;
    this.dropCap = [];
    const boxes: XNode[] = [];
    this.inlines(p, undefined, segments, boxes);
    const frame = kid(pPr, 'w:framePr')?.attrs['w:dropCap'];
    // A deleted paragraph mark (accepted) joins the paragraph to the next one, as a drop cap does.
    if (frame === 'drop' || frame === 'margin' || kid(kid(pPr, 'w:rPr'), 'w:del')) {
      this.dropCap = segments;
      for (const b of boxes) this.blocks(b);
      return;
    }
    const text = segments.map((s) => s.text).join('');
    const ws = words(text);
    this.out.words.push(...ws);
    if (heading !== undefined && heading <= 6) {
      if (ws.length) this.out.headings.push(`h${heading}:${ws.join(' ')}`);
      if (ws.length) this.open = [];
    } else {
      const numPr = kid(pPr, 'w:numPr') ?? chain.map((s) => kid(s.pPr, 'w:numPr')).find(Boolean);
      const numId = kid(numPr, 'w:numId')?.attrs['w:val'] ?? chain.map((s) => kid(kid(s.pPr, 'w:numPr'), 'w:numId')?.attrs['w:val']).find(Boolean);
      const ilvl = kid(kid(pPr, 'w:numPr'), 'w:ilvl')?.attrs['w:val'] ?? kid(numPr, 'w:ilvl')?.attrs['w:val'] ?? '0';
      const lvl = numId && numId !== '0' ? this.levels.get(`${numId}/${ilvl}`) : undefined;
      if (lvl && lvl.fmt !== 'none' && lvl.text.trim() && ws.length) {
        // Depth as a reader sees it: levels open above this one in the same run of items, so an item at ilvl 1
        // with no ilvl 0 before it is a top-level item (Markdown and HTML have no orphan sub-levels).
        const level = Number(ilvl);
        while (this.open.length && this.open[this.open.length - 1]! > level) this.open.pop();
        if (!this.open.length || this.open[this.open.length - 1]! < level) this.open.push(level);
        this.out.items.push(`${lvl.fmt === 'bullet' ? 'u' : 'o'}${this.open.length}`);
      } else if (ws.length) this.open = [];
      for (const mark of ['b', 'i', 's'] as const) {
        let run = '';
        const flush = () => {
          this.out[mark === 'b' ? 'strong' : mark === 'i' ? 'em' : 'strike'].push(...words(run));
          run = '';
        };
        for (const s of segments) {
          if (s[mark]) run += s.text;
          else if (s.text.trim()) flush();
        }
        flush();
      }
    }
    for (const b of boxes) this.blocks(b);
  }

  private format(rPr: XNode | undefined): { b: boolean; i: boolean; s: boolean; hidden: boolean } {
    const chain = this.chain(kid(rPr, 'w:rStyle')?.attrs['w:val']);
    const prop = (name: string): boolean => {
      const direct = isOn(kid(rPr, name));
      if (direct !== undefined) return direct;
      for (const s of chain) {
        const v = isOn(kid(s.rPr, name));
        if (v !== undefined) return v;
      }
      return false;
    };
    return { b: prop('w:b'), i: prop('w:i'), s: prop('w:strike') || prop('w:dstrike'), hidden: prop('w:vanish') };
  }

  private inlines(n: XNode, _href: string | undefined, segs: Segment[], boxes: XNode[]): void {
    for (const c of kids(n)) {
      switch (c.name) {
        case 'w:r':
          this.run(c, segs, boxes);
          break;
        case 'w:hyperlink': {
          const id = c.attrs['r:id'];
          const anchor = c.attrs['w:anchor'];
          const external = id ? this.rels.get(id) : undefined;
          const target = external !== undefined ? (anchor ? `${external}#${anchor}` : external) : anchor !== undefined ? '#' : undefined;
          const before = this.emitted;
          this.inlines(c, target, segs, boxes);
          if (target?.trim() && this.emitted > before) this.out.links.push(linkKey(target));
          break;
        }
        case 'w:fldSimple': {
          const link = hyperlinkField(c.attrs['w:instr'] ?? '');
          const before = this.emitted;
          this.inlines(c, link, segs, boxes);
          if (link && this.emitted > before) this.out.links.push(link);
          break;
        }
        case 'w:ins':
        case 'w:moveTo':
        case 'w:smartTag':
        case 'w:customXml':
        case 'w:sdtContent':
        case 'w:dir':
        case 'w:bdo':
          this.inlines(c, _href, segs, boxes);
          break;
        case 'w:sdt':
          this.inlines(kid(c, 'w:sdtContent') ?? c, _href, segs, boxes);
          break;
        case 'mc:AlternateContent':
          this.inlines(kid(c, 'mc:Choice') ?? c, _href, segs, boxes);
          break;
        default:
          break; // pPr, bookmarks, w:del, w:moveFrom, proofing marks, math (m:oMath: not w:t)
      }
    }
  }

  private run(r: XNode, segs: Segment[], boxes: XNode[]): void {
    const f = this.format(kid(r, 'w:rPr'));
    const push = (text: string) => {
      if (this.fields.some((x) => !x.result)) return; // inside a field code: Word shows the result, not the code
      if (f.hidden) return;
      segs.push({ text, b: f.b, i: f.i, s: f.s });
      if (text.trim()) this.emitted += text.length;
    };
    for (const c of kids(r)) {
      switch (c.name) {
        case 'w:t':
          push(textOf(c));
          break;
        case 'w:tab':
        case 'w:br':
        case 'w:cr':
          push(' ');
          break;
        case 'w:noBreakHyphen':
          push('-');
          break;
        case 'w:footnoteReference':
        case 'w:endnoteReference': {
          const key = (c.name === 'w:footnoteReference' ? 'f' : 'e') + (c.attrs['w:id'] ?? '');
          this.out.notes++;
          if (!this.noteQueue.includes(key)) this.noteQueue.push(key);
          push(' ');
          break;
        }
        case 'w:fldChar': {
          const type = c.attrs['w:fldCharType'];
          if (type === 'begin') this.fields.push({ instr: '', result: false, textAtSeparate: 0 });
          else if (type === 'separate') {
            const top = this.fields[this.fields.length - 1];
            if (top) {
              top.result = true;
              top.link = hyperlinkField(top.instr);
              top.textAtSeparate = this.emitted;
            }
          } else if (type === 'end') {
            const top = this.fields.pop();
            if (top?.link && this.emitted > top.textAtSeparate) this.out.links.push(top.link);
          }
          break;
        }
        case 'w:instrText': {
          const top = this.fields[this.fields.length - 1];
          if (top && !top.result) top.instr += textOf(c);
          break;
        }
        case 'w:drawing':
        case 'w:pict':
        case 'w:object':
        case 'mc:AlternateContent':
          boxes.push(...textBoxes(c));
          break;
        default:
          break;
      }
    }
  }
}

/** The w:txbxContent of a drawing, outside mc:Fallback (the fallback repeats the choice's text). */
function textBoxes(n: XNode): XNode[] {
  const out: XNode[] = [];
  const walk = (x: XNode) => {
    for (const c of kids(x)) {
      if (c.name === 'mc:Fallback') continue;
      if (c.name === 'w:txbxContent') out.push(c);
      else walk(c);
    }
  };
  walk(n);
  return out;
}

/** `HYPERLINK "url" \l "anchor"` → its link key; undefined for other fields. */
function hyperlinkField(instr: string): string | undefined {
  const toks = instr.match(/"[^"]*"|\S+/g) ?? [];
  if (toks[0]?.toUpperCase() !== 'HYPERLINK') return undefined;
  let url: string | undefined;
  let anchor: string | undefined;
  for (let i = 1; i < toks.length; i++) {
    const t = toks[i]!;
    const arg = () => toks[++i]?.replace(/^"|"$/g, '');
    if (/^\\l$/i.test(t)) anchor = arg();
    else if (/^\\[otm]$/i.test(t)) arg();
    else if (/^\\/.test(t)) continue;
    else if (url === undefined) url = t.replace(/^"|"$/g, '');
  }
  if (url) return linkKey(anchor ? `${url}#${anchor}` : url);
  return anchor !== undefined ? '#' : undefined;
}

/** The reference measures of a DOCX (see the header). Throws when the package has no main document. */
export function docxReference(bytes: Uint8Array): Extract {
  const files = unzipSync(bytes, { filter: (f) => f.name.endsWith('.xml') || f.name.endsWith('.rels') });
  return new ReferenceReader(files).read();
}
