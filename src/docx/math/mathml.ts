/**
 * Equations (ast.ts) → presentation MathML (MathML Core, which browsers render natively): <mfrac>, <msqrt>,
 * <mroot>, <msub>/<msup>/<msubsup>/<mmultiscripts>, <munder>/<mover>/<munderover>, <mtable>, <menclose>,
 * <mphantom>, tokens <mi>, <mn>, <mo>, <mtext>. The TeX of the equation is kept as its annotation
 * (<semantics>, encoding application/x-tex), as texmath writes it, for copying and for tools that read TeX.
 *
 * Safe whatever the document said: only the elements and attributes named here are written, every piece of
 * text is escaped, and no attribute value comes from the document. The recursion is bounded by the readers'
 * MAX_MATH_DEPTH.
 */
import { splitAlignment } from './align.js';
import type { Equation, MathNode, MathRow } from './ast.js';
import { spacingAccent } from './symbols.js';
import { equationTex } from './tex-write.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One element from a list of them: an <mrow> unless there is exactly one. */
function wrap(parts: string[]): string {
  return parts.length === 1 ? parts[0]! : `<mrow>${parts.join('')}</mrow>`;
}

const LETTER = /\p{L}/u;
const DIGIT = /[0-9]/;
const VARIANT: Record<string, string> = { b: 'bold', bi: 'bold-italic' };

/** A run's tokens: numbers <mn>, letters <mi> (one per letter unless upright), the rest <mo>. */
function runTokens(n: Extract<MathNode, { k: 'run' }>, out: string[]): void {
  if (n.normal) {
    out.push(`<mtext>${esc(n.text)}</mtext>`);
    return;
  }
  const chars = [...n.text];
  const variant = n.style ? VARIANT[n.style] : undefined;
  const upright = n.style === 'p';
  for (let i = 0; i < chars.length;) {
    const c = chars[i]!;
    if (c === ' ' || c === '\u00a0' || c === '\t') {
      i++;
      continue;
    }
    if (DIGIT.test(c)) {
      let j = i + 1;
      while (j < chars.length && (DIGIT.test(chars[j]!) || (chars[j] === '.' && DIGIT.test(chars[j + 1] ?? '')))) j++;
      out.push(`<mn>${chars.slice(i, j).join('')}</mn>`);
      i = j;
      continue;
    }
    if (LETTER.test(c)) {
      if (upright || variant) {
        let j = i + 1;
        while (j < chars.length && LETTER.test(chars[j]!)) j++;
        const word = chars.slice(i, j).join('');
        const mv = variant ?? (j - i === 1 ? 'normal' : undefined);
        out.push(`<mi${mv ? ` mathvariant="${mv}"` : ''}>${esc(word)}</mi>`);
        i = j;
      } else {
        out.push(`<mi>${esc(c)}</mi>`);
        i++;
      }
      continue;
    }
    out.push(`<mo>${esc(c)}</mo>`);
    i++;
  }
}

function row(r: MathRow): string {
  return wrap(parts(r));
}

/** The elements of a row; an empty row is an empty <mrow>. */
function parts(r: MathRow): string[] {
  const out: string[] = [];
  for (const n of r) node(n, out);
  return out.length ? out : ['<mrow></mrow>'];
}

const table = (rows: MathRow[][]) =>
  `<mtable>${rows.map((cells) => `<mtr>${cells.map((c) => `<mtd>${row(c)}</mtd>`).join('')}</mtr>`).join('')}</mtable>`;

function node(n: MathNode, out: string[]): void {
  switch (n.k) {
    case 'run':
      return runTokens(n, out);
    case 'frac':
      if (n.type === 'lin') return void out.push(`<mrow>${row(n.num)}<mo>/</mo>${row(n.den)}</mrow>`);
      return void out.push(
        `<mfrac${n.type === 'noBar' ? ' linethickness="0"' : n.type === 'skw' ? ' bevelled="true"' : ''}>${row(n.num)}${row(n.den)}</mfrac>`,
      );
    case 'rad':
      return void out.push(n.deg?.length ? `<mroot>${row(n.e)}${row(n.deg)}</mroot>` : `<msqrt>${row(n.e)}</msqrt>`);
    case 'nary': {
      let op = `<mo largeop="true">${esc(n.chr)}</mo>`;
      const sub = n.sub ? row(n.sub) : '';
      const sup = n.sup ? row(n.sup) : '';
      const under = n.limLoc === 'undOvr';
      if (sub && sup) op = under ? `<munderover>${op}${sub}${sup}</munderover>` : `<msubsup>${op}${sub}${sup}</msubsup>`;
      else if (sub) op = under ? `<munder>${op}${sub}</munder>` : `<msub>${op}${sub}</msub>`;
      else if (sup) op = under ? `<mover>${op}${sup}</mover>` : `<msup>${op}${sup}</msup>`;
      return void out.push(`<mrow>${op}${n.e.length ? row(n.e) : ''}</mrow>`);
    }
    case 'sub':
      return void out.push(`<msub>${row(n.e)}${row(n.sub)}</msub>`);
    case 'sup':
      return void out.push(`<msup>${row(n.e)}${row(n.sup)}</msup>`);
    case 'subsup':
      return void out.push(`<msubsup>${row(n.e)}${row(n.sub)}${row(n.sup)}</msubsup>`);
    case 'pre': {
      const s = (r: MathRow) => (r.length ? row(r) : '<none/>');
      return void out.push(`<mmultiscripts>${row(n.e)}<mprescripts/>${s(n.sub)}${s(n.sup)}</mmultiscripts>`);
    }
    case 'acc':
      return void out.push(`<mover accent="true">${row(n.e)}<mo>${esc(spacingAccent(n.chr))}</mo></mover>`);
    case 'bar':
      return void out.push(
        n.pos === 'top' ? `<mover accent="true">${row(n.e)}<mo>\u00af</mo></mover>` : `<munder accentunder="true">${row(n.e)}<mo>_</mo></munder>`,
      );
    case 'delim': {
      const p: string[] = [];
      if (n.open) p.push(`<mo fence="true">${esc(n.open)}</mo>`);
      n.items.forEach((it, i) => {
        if (i > 0 && n.sep) p.push(`<mo separator="true">${esc(n.sep)}</mo>`);
        p.push(row(it));
      });
      if (n.close) p.push(`<mo fence="true">${esc(n.close)}</mo>`);
      return void out.push(`<mrow>${p.join('')}</mrow>`);
    }
    case 'matrix':
      return void out.push(table(n.rows));
    case 'eqarr':
      return void out.push(table(n.rows.map((r) => splitAlignment(r))));
    case 'func':
      return void out.push(`<mrow>${row(n.name)}<mo>\u2061</mo>${row(n.e)}</mrow>`);
    case 'lim':
      return void out.push(n.pos === 'low' ? `<munder>${row(n.e)}${row(n.lim)}</munder>` : `<mover>${row(n.e)}${row(n.lim)}</mover>`);
    case 'group': {
      const c = `<mo>${esc(n.chr)}</mo>`;
      return void out.push(n.pos === 'top' ? `<mover accent="true">${row(n.e)}${c}</mover>` : `<munder accentunder="true">${row(n.e)}${c}</munder>`);
    }
    case 'box':
      return void out.push(n.border ? `<menclose notation="box">${row(n.e)}</menclose>` : row(n.e));
    case 'phantom':
      return void out.push(`<mphantom>${row(n.e)}</mphantom>`);
  }
}

/** One equation as a <math> element (block for display equations), its TeX as the annotation. */
export function equationMathml(eq: Equation): string {
  const tex = equationTex(eq.row);
  const body = row(eq.row);
  const annotation = tex ? `<annotation encoding="application/x-tex">${esc(tex)}</annotation>` : '';
  return `<math xmlns="http://www.w3.org/1998/Math/MathML"${eq.display ? ' display="block"' : ''}><semantics>${body}${annotation}</semantics></math>`;
}
