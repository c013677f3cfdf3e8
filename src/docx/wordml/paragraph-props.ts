/** Paragraph properties (`<w:pPr>`): style, numbering, borders, shading, spacing, indentation, alignment. */

/** A border line: an OOXML ST_Border style, its width in eighths of a point, and its colour (hex or auto). */
export interface BorderSpec {
  style: string;
  sz: number;
  color: string;
}

export interface NumPr {
  numId: number;
  ilvl: number;
}

export interface ParaProps {
  style?: string;
  keepNext?: boolean;
  pageBreakBefore?: boolean;
  numPr?: NumPr;
  borderBottom?: BorderSpec;
  borderAll?: BorderSpec;
  shade?: string;
  bidi?: boolean;
  before?: number;
  after?: number;
  line?: number; // 240ths of a line (auto) when lineRule auto
  lineExact?: number; // twips
  indLeft?: number;
  indRight?: number;
  indFirst?: number;
  jc?: string;
  outlineLvl?: number;
}

/** A copy of paragraph properties with every field present (one object shape; see copyRun). */
export function copyPara(p: ParaProps | undefined): ParaProps {
  if (!p) {
    return {
      style: undefined,
      keepNext: undefined,
      pageBreakBefore: undefined,
      numPr: undefined,
      borderBottom: undefined,
      borderAll: undefined,
      shade: undefined,
      bidi: undefined,
      before: undefined,
      after: undefined,
      line: undefined,
      lineExact: undefined,
      indLeft: undefined,
      indRight: undefined,
      indFirst: undefined,
      jc: undefined,
      outlineLvl: undefined,
    };
  }
  return {
    style: p.style,
    keepNext: p.keepNext,
    pageBreakBefore: p.pageBreakBefore,
    numPr: p.numPr,
    borderBottom: p.borderBottom,
    borderAll: p.borderAll,
    shade: p.shade,
    bidi: p.bidi,
    before: p.before,
    after: p.after,
    line: p.line,
    lineExact: p.lineExact,
    indLeft: p.indLeft,
    indRight: p.indRight,
    indFirst: p.indFirst,
    jc: p.jc,
    outlineLvl: p.outlineLvl,
  };
}

/** Twips clamped to what Word accepts for spacing (0 to 22 inches). */
function clampTw(n: number): number {
  return Math.max(0, Math.min(31680, Math.round(n)));
}

export function pPrXml(p: ParaProps): string {
  let s = '';
  if (p.style) s += `<w:pStyle w:val="${p.style}"/>`;
  if (p.keepNext) s += '<w:keepNext/>';
  if (p.pageBreakBefore) s += '<w:pageBreakBefore/>';
  if (p.numPr) s += `<w:numPr><w:ilvl w:val="${p.numPr.ilvl}"/><w:numId w:val="${p.numPr.numId}"/></w:numPr>`;
  if (p.borderAll) {
    const b = p.borderAll;
    const one = (side: string) => `<w:${side} w:val="${b.style}" w:sz="${b.sz}" w:space="4" w:color="${b.color}"/>`;
    s += `<w:pBdr>${one('top')}${one('left')}${one('bottom')}${one('right')}</w:pBdr>`;
  } else if (p.borderBottom) {
    const b = p.borderBottom;
    s += `<w:pBdr><w:bottom w:val="${b.style}" w:sz="${b.sz}" w:space="1" w:color="${b.color}"/></w:pBdr>`;
  }
  if (p.shade) s += `<w:shd w:val="clear" w:color="auto" w:fill="${p.shade}"/>`;
  if (p.bidi) s += '<w:bidi/>';
  if (p.before !== undefined || p.after !== undefined || p.line !== undefined || p.lineExact !== undefined) {
    s += '<w:spacing';
    if (p.before !== undefined) s += ` w:before="${clampTw(p.before)}"`;
    if (p.after !== undefined) s += ` w:after="${clampTw(p.after)}"`;
    if (p.lineExact !== undefined) s += ` w:line="${clampTw(p.lineExact)}" w:lineRule="atLeast"`;
    else if (p.line !== undefined) s += ` w:line="${clampTw(p.line)}" w:lineRule="auto"`;
    s += '/>';
  }
  if (p.indLeft !== undefined || p.indRight !== undefined || p.indFirst !== undefined) {
    s += '<w:ind';
    if (p.indLeft !== undefined) s += ` w:left="${Math.round(p.indLeft)}"`;
    if (p.indRight !== undefined) s += ` w:right="${Math.round(p.indRight)}"`;
    if (p.indFirst !== undefined) s += p.indFirst >= 0 ? ` w:firstLine="${Math.round(p.indFirst)}"` : ` w:hanging="${Math.round(-p.indFirst)}"`;
    s += '/>';
  }
  if (p.jc) s += `<w:jc w:val="${p.jc}"/>`;
  if (p.outlineLvl !== undefined) s += `<w:outlineLvl w:val="${p.outlineLvl}"/>`;
  return s ? `<w:pPr>${s}</w:pPr>` : '';
}

/** A horizontal rule: an empty paragraph with a bottom border. */
export function horizontalRuleProps(): ParaProps {
  return { style: 'HorizontalRule', borderBottom: { style: 'single', sz: 6, color: 'auto' } };
}
