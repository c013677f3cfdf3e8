/**
 * What the reader needs from word/styles.xml, resolved along each style's basedOn chain (bounded, cycles
 * cut): the heading level (a "heading N" name, Title, or an outline level), the block kind a style implies
 * (quote, code), the numbering a style carries (list styles such as "List Bullet"), a table style's borders,
 * and the run marks of character styles (Verbatim Char, Strong, Emphasis...).
 */
import { attr, child, childElements, type XElement } from '../xml.js';
import type { Marks } from './model.js';
import { memoBySource } from './parse.js';

/** basedOn chains longer than this are cut (Word's own are a handful deep). */
const MAX_CHAIN = 16;

interface RawStyle {
  id: string;
  type: string;
  name: string;
  basedOn?: string;
  el: XElement;
}

export interface ParaStyleInfo {
  heading?: number;
  quote?: boolean;
  code?: boolean;
  /** Numbering carried by the style (w:numPr in its pPr). */
  numId?: string;
  ilvl?: number;
  /** The style names along the chain, lower case (for list-paragraph checks). */
  names: string[];
}

const QUOTE_NAMES = new Set(['quote', 'intense quote', 'block text', 'block quote', 'blockquote', 'quotations', 'quotation']);
/** Style ids of quote styles (Word's built-in ids, also in documents whose style names are translated). */
const QUOTE_IDS =
  /^(quote|intensequote|blocktext|blockquote|quotations?|zitat|intensiveszitat|citation|citationintense|cita|citadestacada|citazione|citazioneintensa|citaat|duidelijkcitaat)$/i;
const CODE_NAMES = new Set(['source code', 'html preformatted', 'code', 'macro text', 'preformatted text', 'code block', 'verbatim', 'listing']);
/** Style ids of code styles (Word's built-in ids and pandoc's). */
const CODE_IDS = /^(sourcecode|htmlpreformatted|code|macrotext|preformattedtext|codeblock|verbatim|listing)$/i;
const CODE_CHAR_NAMES = new Set(['verbatim char', 'html code', 'source code char', 'code char', 'html typewriter', 'inline code', 'code']);

/** Font families treated as monospace (a run in one is code). */
export const MONOSPACE =
  /^(courier( new)?|consolas|menlo|monaco|lucida console|lucida sans typewriter|source code pro|dejavu sans mono|liberation mono|cascadia (code|mono)|fira (code|mono)|roboto mono|ubuntu mono|andale mono|sf mono|jetbrains mono|noto (sans )?mono|inconsolata|hack|ocr a|pt mono|ibm plex mono)$/i;

export const isOn = (e: XElement | undefined): boolean => {
  if (!e) return false;
  const v = attr(e, 'w:val');
  return v === undefined || !/^(0|false|off|none)$/i.test(v);
};

type RPrMarks = Partial<Record<keyof Marks, unknown>> & { off?: Set<keyof Marks> };

/**
 * Marks of a w:rPr (direct or a style's): only what is stated there. `undefined` entries mean "not said".
 * Memoised on the rPr's source text within its part (parse.ts memoBySource): the result is shared between
 * runs written alike and must not be modified.
 */
export function rPrMarks(rPr: XElement | undefined): RPrMarks {
  return rPr ? memoBySource(rPr, computeRPrMarks) : {};
}

function toggle(rPr: XElement, out: RPrMarks, off: Set<keyof Marks>, name: string, key: 'b' | 'i' | 's' | 'u' | 'code'): void {
  const e = child(rPr, name);
  if (!e) return;
  if (isOn(e)) out[key] = true;
  else off.add(key);
}

function computeRPrMarks(rPr: XElement): RPrMarks {
  const out: RPrMarks = {};
  const off = new Set<keyof Marks>();
  toggle(rPr, out, off, 'w:b', 'b');
  toggle(rPr, out, off, 'w:i', 'i');
  toggle(rPr, out, off, 'w:strike', 's');
  if (!out.s) toggle(rPr, out, off, 'w:dstrike', 's');
  const u = child(rPr, 'w:u');
  if (u) {
    const v = attr(u, 'w:val');
    if (v && v !== 'none') out.u = true;
    else off.add('u');
  }
  const va = attr(child(rPr, 'w:vertAlign') ?? rPr, 'w:val');
  if (va === 'superscript') out.sup = true;
  else if (va === 'subscript') out.sub = true;
  const color = attr(child(rPr, 'w:color') ?? rPr, 'w:val');
  if (color && /^[0-9a-f]{6}$/i.test(color) && color.toLowerCase() !== '000000') out.color = color.toUpperCase();
  const sz = Number(attr(child(rPr, 'w:sz') ?? rPr, 'w:val'));
  if (sz > 0 && sz < 3200) out.size = sz / 2;
  const hl = attr(child(rPr, 'w:highlight') ?? rPr, 'w:val');
  if (hl && /^[a-z]{3,20}$/i.test(hl) && hl !== 'none') out.highlight = hl;
  const fonts = child(rPr, 'w:rFonts');
  const font = fonts && (attr(fonts, 'w:ascii') ?? attr(fonts, 'w:hAnsi') ?? attr(fonts, 'w:cs'));
  if (font && MONOSPACE.test(font.trim())) out.code = true;
  if (off.size) out.off = off;
  return out;
}

export class StyleSheet {
  private readonly styles = new Map<string, RawStyle>();
  private readonly paraCache = new Map<string, ParaStyleInfo>();
  private readonly charCache = new Map<string, Marks>();
  private readonly defaultPara?: string;

  constructor(root: XElement | undefined) {
    let def: string | undefined;
    for (const s of root ? childElements(root, 'w:style') : []) {
      const id = attr(s, 'w:styleId');
      if (!id) continue;
      const type = attr(s, 'w:type') ?? 'paragraph';
      const nameEl = child(s, 'w:name');
      const basedOnEl = child(s, 'w:basedOn');
      this.styles.set(`${type}:${id}`, {
        id,
        type,
        name: ((nameEl && attr(nameEl, 'w:val')) ?? id).toLowerCase(),
        basedOn: basedOnEl && attr(basedOnEl, 'w:val'),
        el: s,
      });
      if (type === 'paragraph' && /^(1|true|on)$/.test(attr(s, 'w:default') ?? '')) def = id;
    }
    this.defaultPara = def;
  }

  private chain(type: string, id: string | undefined): RawStyle[] {
    const out: RawStyle[] = [];
    const seen = new Set<string>();
    for (let cur = id; cur && out.length < MAX_CHAIN && !seen.has(cur);) {
      seen.add(cur);
      const s = this.styles.get(`${type}:${cur}`);
      if (!s) break;
      out.push(s);
      cur = s.basedOn;
    }
    return out;
  }

  /** A paragraph style's meaning (undefined id: the default paragraph style). */
  paragraph(id: string | undefined): ParaStyleInfo {
    const key = id ?? this.defaultPara ?? '';
    const cached = this.paraCache.get(key);
    if (cached) return cached;
    const chain = this.chain('paragraph', key);
    const info: ParaStyleInfo = { names: chain.map((s) => s.name) };
    for (const s of chain) {
      const pPr = child(s.el, 'w:pPr');
      const name = s.name;
      // Table-of-contents entry styles ("toc 1"...) are not headings, whatever outline level they inherit.
      if (info.heading === undefined && !/^toc\s*\d/.test(name)) {
        // "heading 0" (seen in the wild) is a top-level heading, as pandoc reads it.
        const m = /^heading\s*([0-9])$/.exec(name) ?? /^Heading([0-9])$/.exec(s.id);
        if (m) info.heading = Math.max(1, Number(m[1]));
        else if (name === 'title') info.heading = 1;
        else {
          const ol = pPr && child(pPr, 'w:outlineLvl');
          const v = ol ? Number(attr(ol, 'w:val')) : NaN;
          if (v >= 0 && v <= 8) info.heading = v + 1;
        }
      }
      if (QUOTE_NAMES.has(name) || QUOTE_IDS.test(s.id)) info.quote ??= true;
      if (CODE_NAMES.has(name) || CODE_IDS.test(s.id)) info.code ??= true;
      const numPr = pPr && child(pPr, 'w:numPr');
      if (numPr && info.numId === undefined) {
        const n = child(numPr, 'w:numId');
        const l = child(numPr, 'w:ilvl');
        if (n) info.numId = attr(n, 'w:val');
        if (l) info.ilvl = Number(attr(l, 'w:val')) || 0;
      }
      if (!info.code) {
        const m = rPrMarks(child(s.el, 'w:rPr'));
        if (m.code && (name.includes('code') || name.includes('preformat'))) info.code = true;
      }
    }
    this.paraCache.set(key, info);
    return info;
  }

  /** Marks a character style gives its runs (known code style names, and its rPr along the chain). */
  character(id: string): Marks {
    const cached = this.charCache.get(id);
    if (cached) return cached;
    const chain = this.chain('character', id);
    const out: Marks = {};
    // The nearest definition wins: walk from the base to the style itself.
    for (const s of [...chain].reverse()) {
      const m = rPrMarks(child(s.el, 'w:rPr'));
      for (const k of ['b', 'i', 's', 'u', 'code', 'sup', 'sub'] as const) {
        if (m[k]) out[k] = true;
        if (m.off?.has(k)) delete out[k];
      }
      if (CODE_CHAR_NAMES.has(s.name)) out.code = true;
    }
    // Hyperlink styles underline and colour their runs: a link already says so.
    if (chain.some((s) => s.name === 'hyperlink' || s.name === 'followedhyperlink')) delete out.u;
    // Footnote references are superscript by their style; the note reference itself is the mark.
    if (chain.some((s) => s.name.includes('footnote reference') || s.name.includes('endnote reference'))) delete out.sup;
    this.charCache.set(id, out);
    return out;
  }

  /** The numId a numbering style (the target of a w:numStyleLink) carries in its pPr. */
  numberingStyleNumId(id: string): string | undefined {
    for (const s of this.chain('numbering', id)) {
      const numPr = child(child(s.el, 'w:pPr') ?? s.el, 'w:numPr');
      const n = numPr && child(numPr, 'w:numId');
      if (n) return attr(n, 'w:val');
    }
    return undefined;
  }

  /** Whether a table style (or its bases) draws borders. */
  tableBordered(id: string | undefined): boolean {
    for (const s of this.chain('table', id)) {
      const borders = child(child(s.el, 'w:tblPr') ?? s.el, 'w:tblBorders');
      if (borders) return hasBorders(borders);
    }
    return false;
  }
}

export function hasBorders(borders: XElement): boolean {
  return childElements(borders).some((b) => {
    const v = attr(b, 'w:val');
    return v !== undefined && v !== 'nil' && v !== 'none';
  });
}
