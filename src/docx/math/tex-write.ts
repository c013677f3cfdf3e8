/**
 * Equations (ast.ts) → TeX, as pandoc writes math in Markdown (`$…$` inline, `$$…$$` display; the writer puts
 * the dollars) and as KaTeX, MathJax and GitHub read it: \frac, \sqrt, scripts, \sum with limits, accents,
 * \left…\right, matrix environments, aligned, \operatorname, \underbrace...
 *
 * Safe in Markdown whatever the document said: no character of the output can start raw HTML or a link in a
 * renderer that does not know math (`<` `>` are \lt \gt, brackets \lbrack \rbrack, `|` \vert, backticks and
 * dollars escaped), and no line break is written, so the math stays inside its dollars. The recursion is
 * bounded by the readers' MAX_MATH_DEPTH.
 */
import { splitAlignment } from './align.js';
import type { MathNode, MathRow } from './ast.js';
import { ACCENTS, INTEGRALS, NARY_CHARS, TEX_FUNCTIONS, TEX_NAME, texDelimiter } from './symbols.js';

/** Characters with a meaning in TeX, or unsafe in Markdown, written as commands. */
const SPECIAL: Record<string, string> = {
  '{': '\\{',
  '}': '\\}',
  '#': '\\#',
  $: '\\$',
  '%': '\\%',
  '&': '\\&',
  _: '\\_',
  '\\': '\\backslash',
  '~': '\\sim',
  '^': '\\hat{}',
  '<': '\\lt',
  '>': '\\gt',
  '[': '\\lbrack',
  ']': '\\rbrack',
  '|': '\\vert',
  '‖': '\\Vert',
  '`': '\\grave{}',
};

/** Text mode (\text{…}): the same safety, TeX's text-mode escapes. */
const TEXT_SPECIAL: Record<string, string> = {
  '{': '\\{',
  '}': '\\}',
  '#': '\\#',
  $: '\\$',
  '%': '\\%',
  '&': '\\&',
  _: '\\_',
  '\\': '\\textbackslash{}',
  '~': '\\textasciitilde{}',
  '^': '\\textasciicircum{}',
  '<': '\\textless{}',
  '>': '\\textgreater{}',
  '[': '{\\lbrack}',
  ']': '{\\rbrack}',
  '|': '\\textbar{}',
  '`': '\\textasciigrave{}',
};

/** Joins TeX pieces, with a space where a control word would run into a letter (`\pi r`, not `\pir`). */
class TexBuilder {
  s = '';
  add(piece: string): void {
    if (!piece) return;
    if (/\\[A-Za-z]+$/.test(this.s) && /^[A-Za-z0-9]/.test(piece)) this.s += ' ';
    this.s += piece;
  }
}

/** Two pieces of TeX one after the other (a space where a control word meets a letter). */
function cat(a: string, b: string): string {
  const t = new TexBuilder();
  t.add(a);
  t.add(b);
  return t.s;
}

function isAtom(tex: string): boolean {
  return /^(?:\\[A-Za-z]+|\\.|[^\\{}\s])$/u.test(tex) || /^[0-9]$/.test(tex);
}

/** Whether an operand of \sum or \sin can follow it unbraced: one node that is not a run of several characters. */
function bare(row: MathRow, tex: string): boolean {
  return isAtom(tex) || (row.length === 1 && row[0]!.k !== 'run' && !/^[{_^]/.test(tex));
}

/** A script or base argument: braced unless it is one character or one command. */
function arg(tex: string): string {
  return isAtom(tex) ? tex : `{${tex}}`;
}

function runTex(n: Extract<MathNode, { k: 'run' }>, align: boolean): string {
  const chars = [...n.text];
  if (n.normal) {
    let t = '';
    for (const c of chars) t += align && c === '&' ? '&' : (TEXT_SPECIAL[c] ?? (c === '\n' || c === '\r' ? ' ' : c));
    return `\\text{${t}}`;
  }
  const b = new TexBuilder();
  for (const c of chars) {
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\u00a0') continue;
    if (align && c === '&') b.add('&');
    else if (SPECIAL[c]) b.add(SPECIAL[c]);
    else if (TEX_NAME.has(c)) b.add('\\' + TEX_NAME.get(c)!);
    else b.add(c);
  }
  const body = b.s;
  if (!body) return '';
  const letters = /^[A-Za-z]{2,}$/.test(n.text.trim());
  switch (n.style) {
    case 'p':
      return letters || /^[A-Za-z]$/.test(n.text.trim()) ? `\\mathrm{${body}}` : body;
    case 'b':
      return `\\mathbf{${body}}`;
    case 'bi':
      return `\\boldsymbol{${body}}`;
    default:
      return body;
  }
}

/** A function name: \sin for TeX's names, \operatorname{…} for others. */
function functionName(row: MathRow): string {
  if (row.length === 1 && row[0]!.k === 'run' && !row[0]!.normal) {
    const name = row[0]!.text.trim();
    if (TEX_FUNCTIONS.has(name)) return '\\' + name;
    if (/^[A-Za-z]+$/.test(name)) return `\\operatorname{${name}}`;
  }
  return rowTex(row);
}

const MATRIX_ENV: Record<string, string> = { '()': 'pmatrix', '[]': 'bmatrix', '{}': 'Bmatrix', '||': 'vmatrix', '‖‖': 'Vmatrix' };

function matrixBody(rows: MathRow[][]): string {
  return rows.map((r) => r.map((c) => rowTex(c)).join(' & ')).join(' \\\\ ');
}

function nodeTex(n: MathNode): string {
  switch (n.k) {
    case 'run':
      return runTex(n, false);
    case 'frac': {
      const num = rowTex(n.num);
      const den = rowTex(n.den);
      if (n.type === 'noBar') return `\\genfrac{}{}{0pt}{}{${num}}{${den}}`;
      if (n.type === 'lin') return `${arg(num)}/${arg(den)}`;
      if (n.type === 'skw') return `{}^{${num}}/_{${den}}`;
      return `\\frac{${num}}{${den}}`;
    }
    case 'rad':
      return n.deg?.length ? `\\sqrt[${rowTex(n.deg)}]{${rowTex(n.e)}}` : `\\sqrt{${rowTex(n.e)}}`;
    case 'nary': {
      const name = TEX_NAME.get(n.chr);
      let op = NARY_CHARS.has(n.chr) && name ? '\\' + name : (SPECIAL[n.chr] ?? n.chr);
      const integral = INTEGRALS.has(n.chr);
      if ((n.sub || n.sup) && integral && n.limLoc === 'undOvr') op += '\\limits';
      else if ((n.sub || n.sup) && !integral && n.limLoc === 'subSup') op += '\\nolimits';
      if (n.sub) op += `_{${rowTex(n.sub)}}`;
      if (n.sup) op += `^{${rowTex(n.sup)}}`;
      const e = rowTex(n.e);
      if (!e) return op;
      // One operand node is written bare (\sum_{k}\frac{1}{k}, \sum_{n}a_{n}): the reader takes the next atom.
      return bare(n.e, e) ? cat(op, e) : `${op}{${e}}`;
    }
    case 'sub':
      return `${arg(rowTex(n.e))}_{${rowTex(n.sub)}}`;
    case 'sup':
      return `${arg(rowTex(n.e))}^{${rowTex(n.sup)}}`;
    case 'subsup':
      return `${arg(rowTex(n.e))}_{${rowTex(n.sub)}}^{${rowTex(n.sup)}}`;
    case 'pre':
      return `{}_{${rowTex(n.sub)}}^{${rowTex(n.sup)}}${arg(rowTex(n.e))}`;
    case 'acc': {
      const cmd = ACCENTS.get(n.chr);
      const e = rowTex(n.e);
      if (cmd) return `\\${cmd}{${e}}`;
      return `\\overset{${runTex({ k: 'run', text: n.chr }, false)}}{${e}}`;
    }
    case 'bar':
      return n.pos === 'top' ? `\\overline{${rowTex(n.e)}}` : `\\underline{${rowTex(n.e)}}`;
    case 'delim': {
      // A matrix alone between parentheses or brackets is one of amsmath's matrix environments.
      const only = n.items.length === 1 && n.items[0]!.length === 1 ? n.items[0]![0] : undefined;
      const env = MATRIX_ENV[n.open + n.close];
      if (only?.k === 'matrix' && env) return `\\begin{${env}} ${matrixBody(only.rows)} \\end{${env}}`;
      // A fraction without a bar between parentheses: a binomial coefficient.
      if (only?.k === 'frac' && only.type === 'noBar' && n.open === '(' && n.close === ')')
        return `\\binom{${rowTex(only.num)}}{${rowTex(only.den)}}`;
      let sep = ' ';
      if (n.sep === ',' || n.sep === ';') sep = n.sep;
      else if (n.sep && texDelimiter(n.sep) !== '.') sep = ` \\middle${texDelimiter(n.sep)} `;
      else if (n.sep) sep = ` ${runTex({ k: 'run', text: n.sep }, false)} `;
      const inner = n.items.map((it) => rowTex(it)).join(sep);
      return cat(cat(`\\left${texDelimiter(n.open)}`, inner), `\\right${texDelimiter(n.close)}`);
    }
    case 'matrix':
      return `\\begin{matrix} ${matrixBody(n.rows)} \\end{matrix}`;
    case 'eqarr':
      return `\\begin{aligned} ${n.rows
        .map((r) =>
          splitAlignment(r)
            .map((c) => rowTex(c))
            .join(' & '),
        )
        .join(' \\\\ ')} \\end{aligned}`;
    case 'func': {
      const name = functionName(n.name);
      const e = rowTex(n.e);
      const b = new TexBuilder();
      b.add(name);
      if (e) b.add(bare(n.e, e) ? e : `{${e}}`);
      return b.s;
    }
    case 'lim': {
      const lim = rowTex(n.lim);
      const only = n.e.length === 1 ? n.e[0]! : undefined;
      if (n.pos === 'low') {
        if (only?.k === 'run' && !only.normal && /^[A-Za-z]+$/.test(only.text.trim())) return `${functionName(n.e)}_{${lim}}`;
        if (only?.k === 'group' && only.pos === 'bot' && only.chr === '\u23df') return `\\underbrace{${rowTex(only.e)}}_{${lim}}`;
        return `\\underset{${lim}}{${rowTex(n.e)}}`;
      }
      if (only?.k === 'group' && only.pos === 'top' && only.chr === '\u23de') return `\\overbrace{${rowTex(only.e)}}^{${lim}}`;
      return `\\overset{${lim}}{${rowTex(n.e)}}`;
    }
    case 'group': {
      const e = rowTex(n.e);
      if (n.chr === '\u23df') return `\\underbrace{${e}}`;
      if (n.chr === '\u23de') return `\\overbrace{${e}}`;
      const c = runTex({ k: 'run', text: n.chr || ' ' }, false) || '{}';
      return n.pos === 'top' ? `\\overset{${c}}{${e}}` : `\\underset{${c}}{${e}}`;
    }
    case 'box':
      return n.border ? `\\boxed{${rowTex(n.e)}}` : rowTex(n.e);
    case 'phantom':
      return `\\phantom{${rowTex(n.e)}}`;
  }
}

export function rowTex(row: MathRow): string {
  const b = new TexBuilder();
  for (const n of row) b.add(nodeTex(n));
  return b.s;
}

/** An equation's TeX, without the dollars (empty when it has no content). */
export function equationTex(row: MathRow): string {
  return rowTex(row).trim();
}
