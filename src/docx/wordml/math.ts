/**
 * Equations (src/docx/math/ast.ts) → Office Math (OMML), what Word's equation editor writes: an inline
 * equation is an m:oMath in the paragraph, a display equation an m:oMathPara around its m:oMath. Runs are
 * set in Cambria Math, Word's math font; properties follow the schema's element order. Text is escaped
 * (xmlText); the recursion is bounded by the readers' MAX_MATH_DEPTH.
 */
import type { Equation, MathNode, MathRow } from '../math/ast.js';
import { xmlAttr, xmlText } from './escape.js';

const FONT = '<w:rPr><w:rFonts w:ascii="Cambria Math" w:hAnsi="Cambria Math"/></w:rPr>';

const val = (name: string, v: string) => `<m:${name} m:val="${xmlAttr(v)}"/>`;

function run(n: Extract<MathNode, { k: 'run' }>): string {
  if (!n.text) return '';
  const props = n.normal ? '<m:nor/>' : n.style ? val('sty', n.style) : '';
  return `<m:r>${props ? `<m:rPr>${props}</m:rPr>` : ''}${FONT}<m:t xml:space="preserve">${xmlText(n.text)}</m:t></m:r>`;
}

const wrap = (name: string, row: MathRow | undefined) => `<m:${name}>${row ? rowXml(row) : ''}</m:${name}>`;
const e = (row: MathRow) => wrap('e', row);

function nodeXml(n: MathNode): string {
  switch (n.k) {
    case 'run':
      return run(n);
    case 'frac':
      return `<m:f>${n.type !== 'bar' ? `<m:fPr>${val('type', n.type)}</m:fPr>` : ''}${wrap('num', n.num)}${wrap('den', n.den)}</m:f>`;
    case 'rad':
      return n.deg?.length
        ? `<m:rad>${wrap('deg', n.deg)}${e(n.e)}</m:rad>`
        : `<m:rad><m:radPr>${val('degHide', '1')}</m:radPr><m:deg/>${e(n.e)}</m:rad>`;
    case 'nary': {
      const pr = val('chr', n.chr) + val('limLoc', n.limLoc) + (n.sub ? '' : val('subHide', '1')) + (n.sup ? '' : val('supHide', '1'));
      return `<m:nary><m:naryPr>${pr}</m:naryPr>${wrap('sub', n.sub)}${wrap('sup', n.sup)}${e(n.e)}</m:nary>`;
    }
    case 'sub':
      return `<m:sSub>${e(n.e)}${wrap('sub', n.sub)}</m:sSub>`;
    case 'sup':
      return `<m:sSup>${e(n.e)}${wrap('sup', n.sup)}</m:sSup>`;
    case 'subsup':
      return `<m:sSubSup>${e(n.e)}${wrap('sub', n.sub)}${wrap('sup', n.sup)}</m:sSubSup>`;
    case 'pre':
      return `<m:sPre>${wrap('sub', n.sub)}${wrap('sup', n.sup)}${e(n.e)}</m:sPre>`;
    case 'acc':
      return `<m:acc><m:accPr>${val('chr', n.chr)}</m:accPr>${e(n.e)}</m:acc>`;
    case 'bar':
      return `<m:bar><m:barPr>${val('pos', n.pos)}</m:barPr>${e(n.e)}</m:bar>`;
    case 'delim':
      return `<m:d><m:dPr>${val('begChr', n.open)}${val('sepChr', n.sep)}${val('endChr', n.close)}</m:dPr>${(n.items.length ? n.items : [[]]).map(e).join('')}</m:d>`;
    case 'matrix':
      return `<m:m>${n.rows.map((r) => `<m:mr>${(r.length ? r : [[]]).map(e).join('')}</m:mr>`).join('')}</m:m>`;
    case 'eqarr':
      return `<m:eqArr>${(n.rows.length ? n.rows : [[]]).map(e).join('')}</m:eqArr>`;
    case 'func':
      return `<m:func>${wrap('fName', n.name)}${e(n.e)}</m:func>`;
    case 'lim':
      return n.pos === 'low' ? `<m:limLow>${e(n.e)}${wrap('lim', n.lim)}</m:limLow>` : `<m:limUpp>${e(n.e)}${wrap('lim', n.lim)}</m:limUpp>`;
    case 'group':
      return `<m:groupChr><m:groupChrPr>${val('chr', n.chr)}${val('pos', n.pos)}${val('vertJc', n.pos === 'top' ? 'bot' : 'top')}</m:groupChrPr>${e(n.e)}</m:groupChr>`;
    case 'box':
      return n.border ? `<m:borderBox>${e(n.e)}</m:borderBox>` : `<m:box>${e(n.e)}</m:box>`;
    case 'phantom':
      return `<m:phant><m:phantPr>${val('show', '0')}</m:phantPr>${e(n.e)}</m:phant>`;
  }
}

export function rowXml(row: MathRow): string {
  let s = '';
  for (const n of row) s += nodeXml(n);
  return s;
}

/** An equation as paragraph content: m:oMath (inline), or m:oMathPara around it (display). */
export function equationOmml(eq: Equation): string {
  const math = `<m:oMath>${rowXml(eq.row)}</m:oMath>`;
  return eq.display ? `<m:oMathPara>${math}</m:oMathPara>` : math;
}
