/**
 * CSS declarations → run and paragraph properties: what an element's computed style (css.ts) changes in the
 * formatting its content is written with.
 */
import { boxSides, cssColor, fontSizePt, lengthTwips, parseBorder, type Declarations } from './css.js';
import { copyRun, type RunProps } from '../docx/wordml/run-props.js';
import type { Ctx } from '../docx/wordml/writer.js';

/** Background colours Word can show as a highlight rather than shading (for <mark>). */
export const HIGHLIGHTS: Record<string, string> = {
  FFFF00: 'yellow',
  '00FF00': 'green',
  '00FFFF': 'cyan',
  FF00FF: 'magenta',
  FF0000: 'red',
  '0000FF': 'blue',
};

const GENERIC_FONTS: Record<string, string> = {
  monospace: 'Courier New',
  serif: 'Times New Roman',
  'sans-serif': 'Arial',
  cursive: 'Comic Sans MS',
  'system-ui': 'Calibri',
};

/** The run properties (and font size, for em units below) an element's declarations give its content. */
export function runFromCss(run: RunProps, decl: Declarations | undefined, ctx: Ctx): { run: RunProps; fontPt: number } {
  let fontPt = ctx.fontPt;
  if (!decl) return { run, fontPt };
  const r = copyRun(run);
  const fw = decl.get('font-weight');
  if (fw) r.bold = fw === 'bold' || fw === 'bolder' || parseInt(fw, 10) >= 600;
  const fs = decl.get('font-style');
  if (fs) r.italic = fs === 'italic' || fs === 'oblique';
  const td = decl.get('text-decoration-line') ?? decl.get('text-decoration');
  if (td) {
    if (td.includes('underline')) r.underline = true;
    if (td.includes('line-through')) r.strike = true;
    if (td.trim() === 'none') {
      r.underline = false;
      r.strike = false;
    }
  }
  const color = cssColor(decl.get('color'));
  if (color) r.color = color;
  const ff = decl.get('font-family');
  if (ff) {
    const first = ff
      .split(',')[0]!
      .trim()
      .replace(/^["']|["']$/g, '');
    r.font = (GENERIC_FONTS[first.toLowerCase()] ?? first).slice(0, 31);
  }
  const fsz = decl.get('font-size');
  if (fsz) {
    const pt = fontSizePt(fsz, ctx.fontPt);
    if (pt && pt > 0 && pt < 1600) {
      r.sizePt = pt;
      fontPt = pt;
    }
  }
  const tt = decl.get('text-transform');
  if (tt === 'uppercase') r.caps = true;
  if (decl.get('font-variant') === 'small-caps') r.smallCaps = true;
  const va = decl.get('vertical-align');
  if (va === 'super') r.vertAlign = 'superscript';
  else if (va === 'sub') r.vertAlign = 'subscript';
  return { run: r, fontPt };
}

/** Paragraph properties and indentation a block's own paragraphs start from, from its declarations. */
export function applyBlockCss(inner: Ctx, decl: Declarations | undefined, ctx: Ctx): void {
  const styled = runFromCss(inner.run, decl, inner);
  inner.run = styled.run;
  inner.fontPt = styled.fontPt;
  if (!decl) return;
  const para = inner.para;
  const ta = decl.get('text-align');
  if (ta) para.jc = jcOf(ta);
  if (decl.get('direction') === 'rtl') para.bidi = true;
  const em = inner.fontPt * 20;
  let [mt, , mb, ml] = [decl.get('margin-top'), undefined, decl.get('margin-bottom'), decl.get('margin-left')];
  let mr = decl.get('margin-right');
  const margin = decl.get('margin');
  if (margin) {
    const s = boxSides(margin);
    mt ??= s[0];
    mr ??= s[1];
    mb ??= s[2];
    ml ??= s[3];
  }
  const top = lengthTwips(mt, 0, em);
  const bottom = lengthTwips(mb, 0, em);
  const left = lengthTwips(ml, ctx.widthTwips, em);
  const right = lengthTwips(mr, ctx.widthTwips, em);
  const padLeft = lengthTwips(decl.get('padding-left'), ctx.widthTwips, em);
  if (top !== undefined) para.before = top;
  if (bottom !== undefined) para.after = bottom;
  if (left !== undefined || padLeft !== undefined) {
    inner.indent = Math.max(0, (inner.indent ?? 0) + (left ?? 0) + (padLeft ?? 0));
    para.indLeft = inner.indent;
  }
  if (right !== undefined && right > 0) para.indRight = right;
  const ti = lengthTwips(decl.get('text-indent'), ctx.widthTwips, em);
  if (ti !== undefined) para.indFirst = ti;
  const lh = decl.get('line-height');
  if (lh && lh !== 'normal') {
    if (/^\d*\.?\d+$/.test(lh.trim())) para.line = parseFloat(lh) * 240;
    else if (lh.trim().endsWith('%')) para.line = (parseFloat(lh) / 100) * 240;
    else {
      const tw = lengthTwips(lh, 0, em);
      if (tw) para.lineExact = tw;
    }
  }
  const bg = cssColor(decl.get('background-color') ?? backgroundColor(decl.get('background')));
  if (bg) para.shade = bg;
  const border = parseBorder(decl.get('border'));
  if (border && border.style !== 'nil') para.borderAll = border;
  const bb = parseBorder(decl.get('border-bottom'));
  if (bb && bb.style !== 'nil') para.borderBottom = bb;
}

/** An HTML align / CSS text-align value → w:jc. */
export function jcOf(align: string): string | undefined {
  switch (align.trim().toLowerCase()) {
    case 'center':
      return 'center';
    case 'right':
    case 'end':
      return 'right';
    case 'justify':
      return 'both';
    case 'left':
    case 'start':
      return 'left';
  }
  return undefined;
}

/** The colour in a `background` shorthand. */
export function backgroundColor(bg: string | undefined): string | undefined {
  if (!bg) return undefined;
  for (const tok of bg.split(/\s+(?![^(]*\))/)) if (cssColor(tok)) return tok;
  return undefined;
}
