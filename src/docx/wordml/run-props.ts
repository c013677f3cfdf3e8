/**
 * Run properties (`<w:rPr>`): what a span of text looks like. A RunProps is immutable once used, so its XML
 * is computed once and the runs derived from it by one property are shared (see runWith): a walk over a
 * million elements allocates a handful of these, not one per element.
 */
import { xmlAttr } from './escape.js';

export interface RunProps {
  rStyle?: string;
  font?: string;
  bold?: boolean;
  italic?: boolean;
  caps?: boolean;
  smallCaps?: boolean;
  strike?: boolean;
  color?: string;
  sizePt?: number;
  highlight?: string;
  underline?: boolean;
  shade?: string;
  vertAlign?: 'superscript' | 'subscript';
  rtl?: boolean;
  /** The <w:rPr> XML, computed once: a RunProps is never changed after its first use. */
  xml?: string;
  /** Runs derived from this one by a single property (`runWith`), so each element reuses them. */
  derived?: Map<string, RunProps>;
}

/**
 * A copy of a run's properties with every field present: all RunProps share one object shape, which keeps
 * the walk's property reads monomorphic (spread copies of objects with different optional fields do not).
 */
export function copyRun(r: RunProps | undefined): RunProps {
  if (!r) {
    return {
      rStyle: undefined,
      font: undefined,
      bold: undefined,
      italic: undefined,
      caps: undefined,
      smallCaps: undefined,
      strike: undefined,
      color: undefined,
      sizePt: undefined,
      highlight: undefined,
      underline: undefined,
      shade: undefined,
      vertAlign: undefined,
      rtl: undefined,
      xml: undefined,
      derived: undefined,
    };
  }
  return {
    rStyle: r.rStyle,
    font: r.font,
    bold: r.bold,
    italic: r.italic,
    caps: r.caps,
    smallCaps: r.smallCaps,
    strike: r.strike,
    color: r.color,
    sizePt: r.sizePt,
    highlight: r.highlight,
    underline: r.underline,
    shade: r.shade,
    vertAlign: r.vertAlign,
    rtl: r.rtl,
    xml: undefined,
    derived: undefined,
  };
}

type RunField = Exclude<keyof RunProps, 'xml' | 'derived'>;

/** `run` with one property changed, shared between all elements that derive the same way from `run`. */
export function runWith<K extends RunField>(run: RunProps, key: K, value: RunProps[K]): RunProps {
  const id = `${key}\u0000${String(value)}`;
  let derived = run.derived?.get(id);
  if (!derived) {
    derived = copyRun(run);
    derived[key] = value;
    (run.derived ??= new Map()).set(id, derived);
  }
  return derived;
}

/** Run properties XML, memoised per (immutable) RunProps object: text runs share their context's props. */
export function rPrXml(p: RunProps): string {
  return (p.xml ??= buildRPr(p));
}

function buildRPr(p: RunProps): string {
  let s = '';
  if (p.rStyle) s += `<w:rStyle w:val="${p.rStyle}"/>`;
  if (p.font) {
    const f = xmlAttr(p.font);
    s += `<w:rFonts w:ascii="${f}" w:hAnsi="${f}" w:cs="${f}" w:eastAsia="${f}"/>`;
  }
  if (p.bold) s += '<w:b/><w:bCs/>';
  if (p.italic) s += '<w:i/><w:iCs/>';
  if (p.caps) s += '<w:caps/>';
  if (p.smallCaps) s += '<w:smallCaps/>';
  if (p.strike) s += '<w:strike/>';
  if (p.color) s += `<w:color w:val="${p.color}"/>`;
  if (p.sizePt) {
    const hp = Math.max(2, Math.min(3276, Math.round(p.sizePt * 2)));
    s += `<w:sz w:val="${hp}"/><w:szCs w:val="${hp}"/>`;
  }
  if (p.highlight) s += `<w:highlight w:val="${p.highlight}"/>`;
  if (p.underline) s += '<w:u w:val="single"/>';
  if (p.shade) s += `<w:shd w:val="clear" w:color="auto" w:fill="${p.shade}"/>`;
  if (p.vertAlign) s += `<w:vertAlign w:val="${p.vertAlign}"/>`;
  if (p.rtl) s += '<w:rtl/>';
  return s ? `<w:rPr>${s}</w:rPr>` : '';
}

/**
 * CT_RPr child order (ECMA-376 §17.3.2.28): Word refuses run properties out of this order. buildRPr writes
 * its subset in this order; annotate sorts a template's edited run properties by it.
 */
export const RPR_ORDER: readonly string[] = [
  'w:rStyle',
  'w:rFonts',
  'w:b',
  'w:bCs',
  'w:i',
  'w:iCs',
  'w:caps',
  'w:smallCaps',
  'w:strike',
  'w:dstrike',
  'w:outline',
  'w:shadow',
  'w:emboss',
  'w:imprint',
  'w:noProof',
  'w:snapToGrid',
  'w:vanish',
  'w:webHidden',
  'w:color',
  'w:spacing',
  'w:w',
  'w:kern',
  'w:position',
  'w:sz',
  'w:szCs',
  'w:highlight',
  'w:u',
  'w:effect',
  'w:bdr',
  'w:shd',
  'w:fitText',
  'w:vertAlign',
  'w:rtl',
  'w:cs',
  'w:em',
  'w:lang',
  'w:eastAsianLayout',
  'w:specVanish',
  'w:oMath',
  'w:rPrChange',
];

/** The look of a hyperlink's text: Word's Hyperlink character style, where the document has it. */
export const HYPERLINK_STYLE = 'Hyperlink';
/** Hyperlink colour and underline as direct formatting, for documents whose style sheet lacks the style. */
export const HYPERLINK_DIRECT: Readonly<Pick<RunProps, 'color' | 'underline'>> = { color: '0563C1', underline: true };
