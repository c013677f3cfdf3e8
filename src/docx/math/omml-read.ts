/**
 * Office Math (OMML, ECMA-376 Part 1 §22.1) → equations (ast.ts). An m:oMathPara is a display block holding
 * one equation per m:oMath; an m:oMath in running text is an inline equation. Every construct of the schema
 * is read: fractions (bar, skewed, linear, no bar), radicals (with or without degree), n-ary operators (their
 * character, limit placement and hidden limits), scripts (sSub, sSup, sSubSup, sPre), accents, bars,
 * delimiters (begin, end and separator characters, several operands), matrices, equation arrays, functions,
 * lower and upper limits, group characters, boxes and border boxes, phantoms, and runs with their m:sty and
 * m:nor. Properties left out take the schema's defaults.
 *
 * Tracked changes are resolved as the rest of the reader does (insertions kept, deletions dropped): a w:del
 * or w:moveFrom inside an m:r or around math content is left out, a w:ins or w:moveTo is read.
 *
 * Bounded: constructs nested deeper than MAX_MATH_DEPTH are kept as their text (a run), and every node is
 * counted through `count` (the document's node budget).
 */
import { attr, child, childElements, decodeXml, type XElement, type XNode } from '../xml.js';
import { INTEGRALS, TEX_FUNCTIONS } from './symbols.js';
import { MAX_MATH_DEPTH, type Equation, type FracType, type MathNode, type MathRow } from './ast.js';

export interface OmmlReadOptions {
  /** Counts model nodes (throws past the document's budget). */
  count: (n?: number) => void;
  /** Told once when content nested past MAX_MATH_DEPTH is kept as text. */
  warn?: (message: string) => void;
}

const ON = /^(1|on|true)$/i;

/** m:val of a property element: undefined when absent, '' when present without a value. */
function prop(pr: XElement | undefined, name: string): string | undefined {
  const e = pr && child(pr, name);
  if (!e) return undefined;
  return attr(e, 'm:val') ?? '';
}

function flag(pr: XElement | undefined, name: string): boolean {
  const v = prop(pr, name);
  return v !== undefined && (v === '' || ON.test(v));
}

/** A character property: the schema's default when absent, '' when given empty (no character). */
function chr(pr: XElement | undefined, name: string, dflt: string): string {
  const v = prop(pr, name);
  if (v === undefined) return dflt;
  return [...v][0] ?? '';
}

class OmmlReader {
  private deepWarned = false;

  constructor(private readonly o: OmmlReadOptions) {}

  /** The equations of an m:oMathPara or an m:oMath. */
  equations(e: XElement): Equation[] {
    if (e.name === 'm:oMath') return [{ display: false, row: this.row(e.children, 0) }];
    const out: Equation[] = [];
    const go = (nodes: XNode[], d: number) => {
      for (const c of nodes) {
        if (c.type !== 'el') continue;
        if (c.name === 'm:oMath') out.push({ display: true, row: this.row(c.children, 0) });
        else if (d < 4 && (c.name === 'w:ins' || c.name === 'w:moveTo' || c.name === 'w:customXml' || c.name === 'w:smartTag')) go(c.children, d + 1);
      }
    };
    go(e.children, 0);
    return out.filter((q) => q.row.length > 0);
  }

  /** The row of an argument element (m:e, m:num, m:sub...), or empty when absent. */
  private arg(parent: XElement, name: string, depth: number): MathRow {
    const a = child(parent, name);
    return a ? this.row(a.children, depth + 1) : [];
  }

  row(nodes: XNode[], depth: number): MathRow {
    const out: MathRow = [];
    if (depth > MAX_MATH_DEPTH) {
      const text = flatText(nodes, 0);
      if (!this.deepWarned) {
        this.deepWarned = true;
        this.o.warn?.(`equations nested more than ${MAX_MATH_DEPTH} levels deep were kept as their text`);
      }
      if (text) {
        this.o.count();
        out.push({ k: 'run', text });
      }
      return out;
    }
    for (const n of nodes) {
      if (n.type !== 'el') continue;
      this.node(n, depth, out);
    }
    return out;
  }

  private push(out: MathRow, n: MathNode): void {
    this.o.count();
    merge(out, n);
  }

  node(e: XElement, depth: number, out: MathRow): void {
    const pr = (name: string) => child(e, name);
    switch (e.name) {
      case 'm:r':
        return this.run(e, out);
      case 'w:r': {
        // Ordinary text inside an equation.
        const text = runText(e);
        if (text) this.push(out, { k: 'run', text, normal: true });
        return;
      }
      case 'm:f': {
        const t = prop(pr('m:fPr'), 'm:type');
        const type: FracType = t === 'skw' || t === 'lin' || t === 'noBar' ? t : 'bar';
        return this.push(out, { k: 'frac', type, num: this.arg(e, 'm:num', depth), den: this.arg(e, 'm:den', depth) });
      }
      case 'm:rad': {
        const hide = flag(pr('m:radPr'), 'm:degHide');
        const deg = hide ? [] : this.arg(e, 'm:deg', depth);
        return this.push(out, { k: 'rad', deg: deg.length ? deg : undefined, e: this.arg(e, 'm:e', depth) });
      }
      case 'm:nary': {
        const p = pr('m:naryPr');
        const c = chr(p, 'm:chr', '∫');
        const loc = prop(p, 'm:limLoc');
        const sub = flag(p, 'm:subHide') ? [] : this.arg(e, 'm:sub', depth);
        const sup = flag(p, 'm:supHide') ? [] : this.arg(e, 'm:sup', depth);
        return this.push(out, {
          k: 'nary',
          chr: c,
          limLoc: loc === 'undOvr' || loc === 'subSup' ? loc : INTEGRALS.has(c) ? 'subSup' : 'undOvr',
          sub: sub.length ? sub : undefined,
          sup: sup.length ? sup : undefined,
          e: this.arg(e, 'm:e', depth),
        });
      }
      case 'm:sSub':
        return this.push(out, { k: 'sub', e: this.arg(e, 'm:e', depth), sub: this.arg(e, 'm:sub', depth) });
      case 'm:sSup':
        return this.push(out, { k: 'sup', e: this.arg(e, 'm:e', depth), sup: this.arg(e, 'm:sup', depth) });
      case 'm:sSubSup':
        return this.push(out, { k: 'subsup', e: this.arg(e, 'm:e', depth), sub: this.arg(e, 'm:sub', depth), sup: this.arg(e, 'm:sup', depth) });
      case 'm:sPre':
        return this.push(out, { k: 'pre', e: this.arg(e, 'm:e', depth), sub: this.arg(e, 'm:sub', depth), sup: this.arg(e, 'm:sup', depth) });
      case 'm:acc':
        return this.push(out, { k: 'acc', chr: chr(pr('m:accPr'), 'm:chr', '\u0302'), e: this.arg(e, 'm:e', depth) });
      case 'm:bar':
        return this.push(out, { k: 'bar', pos: prop(pr('m:barPr'), 'm:pos') === 'top' ? 'top' : 'bot', e: this.arg(e, 'm:e', depth) });
      case 'm:d': {
        const p = pr('m:dPr');
        const items = childElements(e, 'm:e').map((a) => this.row(a.children, depth + 1));
        return this.push(out, { k: 'delim', open: chr(p, 'm:begChr', '('), close: chr(p, 'm:endChr', ')'), sep: chr(p, 'm:sepChr', '|'), items });
      }
      case 'm:m': {
        const rows = childElements(e, 'm:mr').map((mr) => childElements(mr, 'm:e').map((a) => this.row(a.children, depth + 1)));
        return this.push(out, { k: 'matrix', rows });
      }
      case 'm:eqArr':
        return this.push(out, { k: 'eqarr', rows: childElements(e, 'm:e').map((a) => this.row(a.children, depth + 1)) });
      case 'm:func':
        return this.push(out, { k: 'func', name: this.functionName(this.arg(e, 'm:fName', depth)), e: this.arg(e, 'm:e', depth) });
      case 'm:limLow':
      case 'm:limUpp':
        return this.push(out, {
          k: 'lim',
          pos: e.name === 'm:limLow' ? 'low' : 'upp',
          e: this.arg(e, 'm:e', depth),
          lim: this.arg(e, 'm:lim', depth),
        });
      case 'm:groupChr': {
        const p = pr('m:groupChrPr');
        const pos = prop(p, 'm:pos') === 'top' ? 'top' : 'bot';
        return this.push(out, { k: 'group', chr: chr(p, 'm:chr', '\u23df'), pos, e: this.arg(e, 'm:e', depth) });
      }
      case 'm:box':
      case 'm:borderBox':
        return this.push(out, { k: 'box', border: e.name === 'm:borderBox', e: this.arg(e, 'm:e', depth) });
      case 'm:phant': {
        const p = pr('m:phantPr');
        const show = prop(p, 'm:show');
        const inner = this.arg(e, 'm:e', depth);
        if (show === undefined || show === '' || ON.test(show)) {
          for (const n of inner) merge(out, n);
          return;
        }
        return this.push(out, { k: 'phantom', e: inner });
      }
      case 'm:oMath':
      case 'w:ins':
      case 'w:moveTo':
      case 'w:smartTag':
      case 'w:customXml':
      case 'w:sdtContent':
        for (const n of this.row(e.children, depth + 1)) merge(out, n);
        return;
      case 'w:sdt': {
        const content = child(e, 'w:sdtContent');
        if (content) for (const n of this.row(content.children, depth + 1)) merge(out, n);
        return;
      }
      case 'mc:AlternateContent': {
        const c = child(e, 'mc:Choice') ?? child(e, 'mc:Fallback');
        if (c) for (const n of this.row(c.children, depth + 1)) merge(out, n);
        return;
      }
      default:
        // Properties (m:*Pr, m:ctrlPr), w:del, w:moveFrom, bookmarks, proofing marks.
        return;
    }
  }

  /** m:r: its m:t text (tracked deletions left out), its style (m:sty, m:nor). */
  private run(r: XElement, out: MathRow): void {
    let text = '';
    const collect = (nodes: XNode[], d: number) => {
      for (const c of nodes) {
        if (c.type !== 'el') continue;
        if (c.name === 'm:t' || c.name === 'w:t') text += elementText(c);
        else if (c.name === 'w:ins' || c.name === 'w:moveTo') {
          if (d < 4) collect(c.children, d + 1);
        } else if (c.name === 'w:sym') {
          const code = parseInt(attr(c, 'w:char') ?? '', 16);
          if (code > 0x1f && code < 0xe000) text += String.fromCharCode(code);
        } else if (c.name === 'w:tab') text += ' ';
        // w:del, w:moveFrom, w:delText: a tracked deletion, left out.
      }
    };
    collect(r.children, 0);
    if (!text) return;
    const rPr = child(r, 'm:rPr');
    const sty = prop(rPr, 'm:sty');
    const style = sty === 'p' || sty === 'b' || sty === 'i' || sty === 'bi' ? sty : undefined;
    const normal = flag(rPr, 'm:nor') || undefined;
    const run: MathNode = { k: 'run', text };
    if (style) run.style = style;
    if (normal) run.normal = normal;
    this.push(out, run);
  }

  /** A function's name: runs of a known name are plain (upright) text, as Word shows them. */
  private functionName(row: MathRow): MathRow {
    return row.map((n) => (n.k === 'run' && !n.normal && TEX_FUNCTIONS.has(n.text.trim()) ? { ...n, text: n.text.trim(), style: 'p' as const } : n));
  }
}

/** Appends a node; adjacent runs of the same style are one run (Word splits runs at every edit). */
function merge(out: MathRow, n: MathNode): void {
  const last = out[out.length - 1];
  if (n.k === 'run' && last?.k === 'run' && last.style === n.style && last.normal === n.normal) last.text += n.text;
  else out.push(n);
}

function elementText(e: XElement): string {
  let s = '';
  for (const t of e.children) if (t.type === 'text') s += decodeXml(t.raw);
  return s;
}

function runText(r: XElement): string {
  let s = '';
  for (const c of r.children) if (c.type === 'el' && c.name === 'w:t') s += elementText(c);
  return s;
}

/** The m:t / w:t text of content nested too deeply (tracked deletions left out); XML depth bounds the walk. */
function flatText(nodes: XNode[], d: number): string {
  let s = '';
  for (const c of nodes) {
    if (c.type !== 'el' || c.name === 'w:del' || c.name === 'w:moveFrom') continue;
    if (c.name === 'm:t' || c.name === 'w:t') s += elementText(c);
    else if (d < 600) s += flatText(c.children, d + 1);
  }
  return s;
}

/** The equations of an m:oMathPara (display, one per m:oMath) or an m:oMath (inline). */
export function readOmml(e: XElement, options: OmmlReadOptions): Equation[] {
  return new OmmlReader(options).equations(e);
}
