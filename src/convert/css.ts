/**
 * The CSS cascade, reduced to what maps to Word: rules from <style> blocks (css-tree parse, css-select
 * matching, css-what specificity) and `style` attributes, resolved per element into a property map.
 * Inheritance is applied by the DOM walk (html-to-docx.ts), which passes inherited run properties down.
 */
import * as csstree from 'css-tree';
import { parse as parseSelector, type Selector } from 'css-what';
import type { Document, Element } from 'domhandler';
import { MatchBudgetExceeded, SelectorMatcher } from './selectors.js';

export type Declarations = Map<string, string>;

interface Winner {
  value: string;
  important: boolean;
  specificity: number;
  order: number;
}

/** At most this many selectors are matched per document (the rest are ignored). */
const MAX_SELECTORS = 2000;
/** Simple selectors and combinators in one complex selector. */
const MAX_SELECTOR_TOKENS = 256;
/**
 * Selector-matching work per document, in DOM accesses and compound tests (see selectors.ts): a few
 * hundred milliseconds. A real page's stylesheet needs a small fraction of it.
 */
const MATCH_BUDGET = 10_000_000;
/** The least one selector may spend, however much the ones before it spent. */
const MIN_SELECTOR_SHARE = 1_000_000;

/** Properties the converter reads; everything else is ignored before the cascade (cheaper, smaller maps). */
const USED = new Set([
  'font-weight',
  'font-style',
  'text-decoration',
  'text-decoration-line',
  'color',
  'background-color',
  'background',
  'font-family',
  'font-size',
  'font',
  'text-align',
  'margin',
  'margin-left',
  'margin-right',
  'margin-top',
  'margin-bottom',
  'padding-left',
  'text-indent',
  'line-height',
  'border',
  'border-top',
  'border-bottom',
  'border-left',
  'border-right',
  'border-width',
  'border-style',
  'border-color',
  'width',
  'height',
  'page-break-before',
  'page-break-after',
  'break-before',
  'break-after',
  'vertical-align',
  'display',
  'list-style-type',
  'list-style',
  'text-transform',
  'font-variant',
  'direction',
  'white-space',
  'visibility',
]);

function specificityOf(seq: Selector[] | undefined): number | undefined {
  if (!seq) return undefined;
  let a = 0,
    b = 0,
    c = 0;
  for (const t of seq) {
    if (t.type === 'attribute') {
      if (t.name === 'id' && t.action === 'equals') a++;
      else b++;
    } else if (t.type === 'pseudo') b++;
    else if (t.type === 'tag') c++;
    else if (t.type === 'pseudo-element') return undefined; // ::before and friends have no Word equivalent
  }
  return a * 10000 + b * 100 + c;
}

/** Parses a declaration list ("a: b; c: d !important") into [property, value, important] triples. */
export function parseDeclarations(text: string): Array<[string, string, boolean]> {
  const out: Array<[string, string, boolean]> = [];
  if (text.length > 65536) text = text.slice(0, 65536);
  for (const part of text.split(';')) {
    const colon = part.indexOf(':');
    if (colon <= 0) continue;
    const prop = part.slice(0, colon).trim().toLowerCase();
    if (!USED.has(prop)) continue;
    let value = part.slice(colon + 1).trim();
    let important = false;
    const imp = /!\s*important\s*$/i.exec(value);
    if (imp) {
      important = true;
      value = value.slice(0, imp.index).trim();
    }
    if (value) out.push([prop, value, important]);
  }
  return out;
}

/** Cascade state: per element, the winning declaration of each property. */
export class Cascade {
  private readonly byElement = new Map<Element, Map<string, Winner>>();
  private order = 0;

  /** What the cascade left out, for the converter's warnings. */
  readonly warnings: string[] = [];

  constructor(doc: Document, styleSheets: string[]) {
    let budget = MAX_SELECTORS; // bound the work a hostile stylesheet can cause: at most this many selectors
    const matcher = new SelectorMatcher(doc, MATCH_BUDGET);
    for (const sheet of styleSheets) {
      if (budget <= 0) break;
      let ast: csstree.CssNode;
      try {
        ast = csstree.parse(sheet.length > 1_000_000 ? sheet.slice(0, 1_000_000) : sheet, {
          parseValue: false,
          parseAtrulePrelude: false,
          parseRulePrelude: false,
        });
      } catch {
        continue;
      }
      csstree.walk(ast, {
        visit: 'Rule',
        enter: (rule: csstree.Rule) => {
          if (budget <= 0) return;
          const prelude = csstree.generate(rule.prelude);
          const block = csstree.generate(rule.block).replace(/^\{|\}$/g, '');
          const decls = parseDeclarations(block);
          if (!decls.length) return;
          for (const sel of prelude.split(',')) {
            if (--budget <= 0) return;
            const selector = sel.trim();
            let parsed: Selector[][];
            try {
              parsed = parseSelector(selector);
            } catch {
              continue;
            }
            const seq = parsed.length === 1 ? parsed[0] : undefined;
            const spec = specificityOf(parsed[0]);
            if (spec === undefined) continue;
            if (seq && seq.length > MAX_SELECTOR_TOKENS) {
              this.warnings.push(`a CSS selector longer than ${MAX_SELECTOR_TOKENS} parts was ignored`);
              continue;
            }
            // One selector may spend at most a share of what is left, so a single pathological one is dropped
            // on its own and the rules after it still apply; the total stays bounded.
            const left = matcher.budget.left;
            const share = Math.min(left, Math.max(MIN_SELECTOR_SHARE, Math.floor(left / 4)));
            let matched: Element[] | undefined | 'too costly';
            matcher.budget.left = share;
            try {
              matched = seq ? matcher.select(seq, selector) : matcher.selectString(selector);
            } catch (e) {
              if (!(e instanceof MatchBudgetExceeded)) throw e;
              matched = 'too costly';
            }
            matcher.budget.left = left - (share - Math.max(0, matcher.budget.left));
            if (matched === 'too costly') {
              if (matcher.budget.left <= 0) {
                this.warnings.push('the stylesheet needed too much selector-matching work: its remaining rules were ignored');
                budget = 0;
                return;
              }
              this.warnings.push('a CSS selector that needed too much matching work was ignored');
              continue;
            }
            if (!matched) continue;
            const order = this.order++;
            for (const el of matched) for (const [p, v, imp] of decls) this.offer(el, p, v, imp, spec, order);
          }
        },
      });
    }
  }

  private offer(el: Element, prop: string, value: string, important: boolean, specificity: number, order: number) {
    let m = this.byElement.get(el);
    if (!m) this.byElement.set(el, (m = new Map()));
    const cur = m.get(prop);
    if (
      !cur ||
      (important && !cur.important) ||
      (important === cur.important && (specificity > cur.specificity || (specificity === cur.specificity && order >= cur.order)))
    ) {
      m.set(prop, { value, important, specificity, order });
    }
  }

  /**
   * Declarations of a `style` attribute alone, per attribute text: generated HTML repeats the same few
   * (`text-align:left` on every table cell). Callers only read them.
   */
  private readonly inlineOnly = new Map<string, Declarations>();

  /** The element's resolved declarations: stylesheet winners overridden by its `style` attribute. */
  declarations(el: Element): Declarations | undefined {
    const sheet = this.byElement.size ? this.byElement.get(el) : undefined;
    const inline = el.attribs.style;
    if (!sheet && !inline) return undefined;
    if (!sheet) {
      let cached = this.inlineOnly.get(inline!);
      if (!cached) {
        cached = new Map();
        for (const [p, v] of parseDeclarations(inline!)) cached.set(p, v);
        if (this.inlineOnly.size < 10_000) this.inlineOnly.set(inline!, cached);
      }
      return cached;
    }
    const out: Declarations = new Map();
    if (sheet) for (const [p, w] of sheet) out.set(p, w.value);
    if (inline) {
      for (const [p, v, imp] of parseDeclarations(inline)) {
        const w = sheet?.get(p);
        if (w?.important && !imp) continue;
        out.set(p, v);
      }
    }
    return out;
  }
}

// ---- value helpers -------------------------------------------------------------------------------------

/** A CSS length in twentieths of a point (twips); percentages relative to `percentBase` twips. */
export function lengthTwips(value: string | undefined, percentBase = 0, emTwips = 240): number | undefined {
  if (!value) return undefined;
  const m = /^(-?\d*\.?\d+)\s*(px|pt|pc|cm|mm|in|em|rem|ex|%|)$/i.exec(value.trim());
  if (!m) return undefined;
  const n = parseFloat(m[1]!);
  if (!Number.isFinite(n)) return undefined;
  switch ((m[2] ?? '').toLowerCase()) {
    case 'pt':
      return n * 20;
    case 'pc':
      return n * 240;
    case 'cm':
      return (n / 2.54) * 1440;
    case 'mm':
      return (n / 25.4) * 1440;
    case 'in':
      return n * 1440;
    case 'em':
    case 'rem':
      return n * emTwips;
    case 'ex':
      return (n * emTwips) / 2;
    case '%':
      return (n / 100) * percentBase;
    case 'px':
      return n * 15;
    default:
      return n === 0 ? 0 : n * 15; // unitless (quirks) read as px
  }
}

const FONT_SIZE_KEYWORDS: Record<string, number> = {
  'xx-small': 7,
  'x-small': 7.5,
  small: 10,
  medium: 12,
  large: 13.5,
  'x-large': 18,
  'xx-large': 24,
  'xxx-large': 36,
};

/** CSS font-size → points, relative sizes against the parent's points. */
export function fontSizePt(value: string, parentPt: number): number | undefined {
  const v = value.trim().toLowerCase();
  if (v in FONT_SIZE_KEYWORDS) return FONT_SIZE_KEYWORDS[v];
  if (v === 'smaller') return parentPt / 1.2;
  if (v === 'larger') return parentPt * 1.2;
  const m = /^(\d*\.?\d+)\s*(px|pt|em|rem|%|cm|mm|in)?$/.exec(v);
  if (!m) return undefined;
  const n = parseFloat(m[1]!);
  switch (m[2]) {
    case 'pt':
      return n;
    case 'em':
      return n * parentPt;
    case 'rem':
      return n * 12;
    case '%':
      return (n / 100) * parentPt;
    case 'cm':
      return (n / 2.54) * 72;
    case 'mm':
      return (n / 25.4) * 72;
    case 'in':
      return n * 72;
    default:
      return n * 0.75;
  }
}

const NAMED_COLORS: Record<string, string> = {
  black: '000000',
  white: 'FFFFFF',
  red: 'FF0000',
  green: '008000',
  blue: '0000FF',
  yellow: 'FFFF00',
  gray: '808080',
  grey: '808080',
  silver: 'C0C0C0',
  maroon: '800000',
  purple: '800080',
  fuchsia: 'FF00FF',
  magenta: 'FF00FF',
  lime: '00FF00',
  olive: '808000',
  navy: '000080',
  teal: '008080',
  aqua: '00FFFF',
  cyan: '00FFFF',
  orange: 'FFA500',
  pink: 'FFC0CB',
  brown: 'A52A2A',
  gold: 'FFD700',
  indigo: '4B0082',
  violet: 'EE82EE',
  darkred: '8B0000',
  darkgreen: '006400',
  darkblue: '00008B',
  darkgray: 'A9A9A9',
  darkgrey: 'A9A9A9',
  lightgray: 'D3D3D3',
  lightgrey: 'D3D3D3',
  lightblue: 'ADD8E6',
  lightgreen: '90EE90',
  lightyellow: 'FFFFE0',
  whitesmoke: 'F5F5F5',
  gainsboro: 'DCDCDC',
  crimson: 'DC143C',
  coral: 'FF7F50',
  tomato: 'FF6347',
  salmon: 'FA8072',
  khaki: 'F0E68C',
  beige: 'F5F5DC',
  ivory: 'FFFFF0',
  lavender: 'E6E6FA',
  tan: 'D2B48C',
  steelblue: '4682B4',
  royalblue: '4169E1',
  skyblue: '87CEEB',
  dimgray: '696969',
  dimgrey: '696969',
  slategray: '708090',
  darkorange: 'FF8C00',
  firebrick: 'B22222',
  forestgreen: '228B22',
  seagreen: '2E8B57',
  midnightblue: '191970',
  aliceblue: 'F0F8FF',
  honeydew: 'F0FFF0',
  mintcream: 'F5FFFA',
  azure: 'F0FFFF',
  snow: 'FFFAFA',
  linen: 'FAF0E6',
  wheat: 'F5DEB3',
  chocolate: 'D2691E',
  goldenrod: 'DAA520',
  darkslategray: '2F4F4F',
  darkslategrey: '2F4F4F',
  lightcyan: 'E0FFFF',
  cornsilk: 'FFF8DC',
  lightpink: 'FFB6C1',
  hotpink: 'FF69B4',
  deeppink: 'FF1493',
  orchid: 'DA70D6',
  plum: 'DDA0DD',
  thistle: 'D8BFD8',
  turquoise: '40E0D0',
  chartreuse: '7FFF00',
  lawngreen: '7CFC00',
  yellowgreen: '9ACD32',
  olivedrab: '6B8E23',
  darkcyan: '008B8B',
  cadetblue: '5F9EA0',
  dodgerblue: '1E90FF',
  deepskyblue: '00BFFF',
  cornflowerblue: '6495ED',
  mediumblue: '0000CD',
  darkviolet: '9400D3',
  rebeccapurple: '663399',
  sienna: 'A0522D',
  peru: 'CD853F',
  rosybrown: 'BC8F8F',
  lightsalmon: 'FFA07A',
  papayawhip: 'FFEFD5',
  moccasin: 'FFE4B5',
  peachpuff: 'FFDAB9',
  mistyrose: 'FFE4E1',
  lemonchiffon: 'FFFACD',
  lightsteelblue: 'B0C4DE',
  powderblue: 'B0E0E6',
  palegreen: '98FB98',
};

/** A CSS colour → RRGGBB, or undefined (transparent, unknown, fully transparent rgba). */
export function cssColor(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = value.trim().toLowerCase();
  if (v in NAMED_COLORS) return NAMED_COLORS[v];
  let m = /^#([0-9a-f]{3,4})$/.exec(v);
  if (m)
    return m[1]!
      .slice(0, 3)
      .split('')
      .map((c) => c + c)
      .join('')
      .toUpperCase();
  m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/.exec(v);
  if (m) return m[2] === '00' ? undefined : m[1]!.toUpperCase();
  m = /^rgba?\(\s*([\d.]+%?)[\s,]+([\d.]+%?)[\s,]+([\d.]+%?)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(v);
  if (m) {
    if (m[4] !== undefined && parseFloat(m[4]) === 0) return undefined;
    return [m[1]!, m[2]!, m[3]!]
      .map((x) => {
        const n = x.endsWith('%') ? (parseFloat(x) / 100) * 255 : parseFloat(x);
        return Math.max(0, Math.min(255, Math.round(n)))
          .toString(16)
          .padStart(2, '0');
      })
      .join('')
      .toUpperCase();
  }
  return undefined;
}

export interface BorderSpec {
  style: string; // OOXML ST_Border value
  sz: number; // eighths of a point
  color: string;
}

const BORDER_STYLES: Record<string, string> = {
  solid: 'single',
  dashed: 'dashed',
  dotted: 'dotted',
  double: 'double',
  groove: 'threeDEngrave',
  ridge: 'threeDEmboss',
  inset: 'inset',
  outset: 'outset',
  none: 'nil',
  hidden: 'nil',
};

/** `border: 1px solid #000` (any order) → a Word border; `none`/`0` → nil. */
export function parseBorder(value: string | undefined): BorderSpec | undefined {
  if (!value) return undefined;
  let style: string | undefined;
  let width: number | undefined;
  let color: string | undefined;
  for (const tok of value
    .trim()
    .toLowerCase()
    .split(/\s+(?![^(]*\))/)) {
    if (tok in BORDER_STYLES) style = BORDER_STYLES[tok];
    else if (tok === 'thin') width = 15;
    else if (tok === 'medium') width = 45;
    else if (tok === 'thick') width = 75;
    else if (/^[\d.]/.test(tok)) width = lengthTwips(tok) ?? width;
    else color = cssColor(tok) ?? color;
  }
  if (width === 0) style = 'nil';
  if (!style) style = width !== undefined || color ? 'single' : undefined;
  if (!style) return undefined;
  const sz = Math.max(2, Math.min(96, Math.round(((width ?? 15) / 20) * 8)));
  return { style, sz, color: color ?? '000000' };
}

/** margin shorthand → [top, right, bottom, left] raw values. */
export function boxSides(value: string): [string, string, string, string] {
  const p = value.trim().split(/\s+/);
  const [t, r = t, b = t, l = r] = p as [string, string?, string?, string?];
  return [t, r!, b!, l!];
}
