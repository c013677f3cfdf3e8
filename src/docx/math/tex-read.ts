/**
 * TeX math (the subset Markdown writers and Folio's TeX writer use) → equations (ast.ts), for Markdown → DOCX:
 * groups, sub- and superscripts, \frac \dfrac \tfrac \binom \genfrac, \sqrt with an optional degree, large
 * operators (\sum \int \prod \bigcup… with \limits/\nolimits), function names (\sin, \lim_{…}, \operatorname),
 * accents (\hat \vec \bar…), \overline \underline, \overbrace \underbrace, \overset \underset \stackrel,
 * \left…\middle…\right, matrix environments (matrix, pmatrix, bmatrix, Bmatrix, vmatrix, Vmatrix, array),
 * aligned/align/gathered/split/cases, \text \mathrm \mathbf \boldsymbol, \boxed, \phantom, spacing commands
 * and the named symbols of symbols.ts. An unknown command is kept as its name.
 *
 * Bounded: one pass over the input; groups nested deeper than MAX_MATH_DEPTH are kept as their text; every
 * node is counted through `count`.
 */
import { MAX_MATH_DEPTH, type FracType, type MathNode, type MathRow } from './ast.js';
import { ACCENT_CHAR, INTEGRALS, NARY_CHARS, TEX_CHAR, TEX_FUNCTIONS } from './symbols.js';

type Token =
  { k: 'cmd'; v: string } | { k: 'char'; v: string } | { k: 'open' } | { k: 'close' } | { k: 'sub' } | { k: 'sup' } | { k: 'amp' } | { k: 'nl' };

function tokenize(tex: string): Token[] {
  const out: Token[] = [];
  const chars = [...tex];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) break;
      if (/[A-Za-z]/.test(next)) {
        let j = i + 1;
        while (j < chars.length && /[A-Za-z]/.test(chars[j]!)) j++;
        out.push({ k: 'cmd', v: chars.slice(i + 1, j).join('') });
        i = j - 1;
      } else if (next === '\\') {
        out.push({ k: 'nl' });
        i++;
      } else {
        out.push({ k: 'cmd', v: next });
        i++;
      }
    } else if (c === '{') out.push({ k: 'open' });
    else if (c === '}') out.push({ k: 'close' });
    else if (c === '_') out.push({ k: 'sub' });
    else if (c === '^') out.push({ k: 'sup' });
    else if (c === '&') out.push({ k: 'amp' });
    else if (c === '%') {
      while (i < chars.length && chars[i] !== '\n') i++;
    } else out.push({ k: 'char', v: c });
  }
  return out;
}

/** Delimiters after \left, \right, \middle (and the bare ones of \bigl and the like). */
const DELIMS: Record<string, string> = {
  '(': '(',
  ')': ')',
  '[': '[',
  ']': ']',
  '|': '|',
  '/': '/',
  '.': '',
  '{': '{',
  '}': '}',
  lbrace: '{',
  rbrace: '}',
  lbrack: '[',
  rbrack: ']',
  vert: '|',
  lvert: '|',
  rvert: '|',
  Vert: '‖',
  lVert: '‖',
  rVert: '‖',
  '|cmd': '‖',
  langle: '⟨',
  rangle: '⟩',
  lfloor: '⌊',
  rfloor: '⌋',
  lceil: '⌈',
  rceil: '⌉',
  lt: '⟨',
  gt: '⟩',
};

const MATRIX_DELIMS: Record<string, [string, string]> = {
  pmatrix: ['(', ')'],
  bmatrix: ['[', ']'],
  Bmatrix: ['{', '}'],
  vmatrix: ['|', '|'],
  Vmatrix: ['‖', '‖'],
};

const SPACES = new Set([',', ';', ':', '!', ' ', 'quad', 'qquad', 'enspace', 'thinspace', 'medspace', 'thickspace', 'space']);
const IGNORED = new Set([
  'limits',
  'nolimits',
  'displaystyle',
  'textstyle',
  'scriptstyle',
  'nonumber',
  'notag',
  'left',
  'right',
  'big',
  'Big',
  'bigg',
  'Bigg',
  'bigl',
  'bigr',
  'Bigl',
  'Bigr',
]);

class TexReader {
  private i = 0;
  private deepWarned = false;

  constructor(
    private readonly t: Token[],
    private readonly count: () => void,
    private readonly warn?: (m: string) => void,
  ) {}

  /** Skips a token a row stopped at (a stray } or \right at the top level); false at the end. */
  skipStray(): boolean {
    if (this.i >= this.t.length) return false;
    this.i++;
    return true;
  }

  private peek(): Token | undefined {
    return this.t[this.i];
  }

  /** Appends a node (runs are merged when the row is done: a script applies to the run's last character). */
  private node(out: MathRow, n: MathNode): void {
    this.count();
    out.push(n);
  }

  /** A row up to `}` (consumed by the caller), \right, \end, &, \\ or the end; adjacent runs merged. */
  row(depth: number, stopAtCells = false): MathRow {
    return mergeRuns(this.rowNodes(depth, stopAtCells));
  }

  private rowNodes(depth: number, stopAtCells: boolean): MathRow {
    const out: MathRow = [];
    if (depth > MAX_MATH_DEPTH) {
      this.node(out, { k: 'run', text: this.rawText() });
      if (!this.deepWarned) {
        this.deepWarned = true;
        this.warn?.(`equations nested more than ${MAX_MATH_DEPTH} levels deep were kept as their text`);
      }
      return out;
    }
    for (;;) {
      const tok = this.peek();
      if (!tok || tok.k === 'close') return out;
      if (tok.k === 'cmd' && (tok.v === 'right' || tok.v === 'end' || tok.v === 'middle')) return out;
      if (stopAtCells && (tok.k === 'amp' || tok.k === 'nl')) return out;
      if (tok.k === 'amp' || tok.k === 'nl') {
        this.i++;
        continue;
      }
      this.atomWithScripts(out, depth);
    }
  }

  /** The text of the tokens up to the close of the current group (for content nested too deeply). */
  private rawText(): string {
    let s = '';
    let level = 0;
    for (let tok = this.peek(); tok; tok = this.peek()) {
      if (tok.k === 'close' && level === 0) break;
      if (tok.k === 'open') level++;
      if (tok.k === 'close') level--;
      if (tok.k === 'char') s += tok.v;
      else if (tok.k === 'cmd') s += TEX_CHAR.get(tok.v) ?? (tok.v.length > 1 ? tok.v : '');
      this.i++;
    }
    return s;
  }

  /** One argument: a group's row, or a single atom. */
  private arg(depth: number): MathRow {
    const tok = this.peek();
    if (!tok) return [];
    if (tok.k === 'open') {
      this.i++;
      const r = this.row(depth + 1);
      if (this.peek()?.k === 'close') this.i++;
      return r;
    }
    const out: MathRow = [];
    if (tok.k === 'char') {
      this.i++;
      if (tok.v !== ' ') this.node(out, { k: 'run', text: tok.v });
      return out.length ? out : this.arg(depth);
    }
    this.atom(out, depth);
    return out;
  }

  /** An optional [ … ] argument (\sqrt[3]{x}), as a row. */
  private optional(depth: number): MathRow | undefined {
    const tok = this.peek();
    if (tok?.k !== 'char' || tok.v !== '[') return undefined;
    this.i++;
    const out: MathRow = [];
    for (let t = this.peek(); t && !(t.k === 'char' && t.v === ']') && t.k !== 'close'; t = this.peek()) this.atomWithScripts(out, depth + 1);
    if (this.peek()?.k === 'char') this.i++;
    return out;
  }

  /** The raw text of a {…} argument (\text, \begin's name, \operatorname). */
  private textArg(): string {
    if (this.peek()?.k !== 'open') {
      const tok = this.peek();
      this.i++;
      return tok?.k === 'char' ? tok.v : '';
    }
    this.i++;
    let s = '';
    let level = 0;
    for (let tok = this.peek(); tok; tok = this.peek()) {
      this.i++;
      if (tok.k === 'close') {
        if (level === 0) break;
        level--;
        continue;
      }
      if (tok.k === 'open') level++;
      else if (tok.k === 'char') s += tok.v;
      else if (tok.k === 'cmd') s += tok.v.length === 1 ? (tok.v === ' ' ? ' ' : tok.v) : (TEX_CHAR.get(tok.v) ?? TEXT_COMMANDS[tok.v] ?? '');
      else if (tok.k === 'sub') s += '_';
      else if (tok.k === 'sup') s += '^';
      else if (tok.k === 'amp') s += '&';
    }
    return s;
  }

  private atomWithScripts(out: MathRow, depth: number): void {
    const before = out.length;
    this.atom(out, depth);
    let sub: MathRow | undefined;
    let sup: MathRow | undefined;
    for (let tok = this.peek(); tok && (tok.k === 'sub' || tok.k === 'sup'); tok = this.peek()) {
      this.i++;
      if (tok.k === 'sub') sub = this.arg(depth);
      else sup = this.arg(depth);
    }
    if (!sub && !sup) return;
    const base = out.splice(before);
    const last = base[base.length - 1];
    if (base.length === 0) {
      // Scripts on nothing ({}_{a}^{b}X): prescripts of what follows.
      this.count();
      const next = this.peek();
      const e = next && (next.k === 'open' || next.k === 'cmd' || (next.k === 'char' && next.v.trim())) ? this.arg(depth) : [];
      out.push(e.length ? { k: 'pre', e, sub: sub ?? [], sup: sup ?? [] } : { k: 'subsup', e, sub: sub ?? [], sup: sup ?? [] });
      return;
    }
    if (base.length === 1 && last?.k === 'nary' && !last.sub && !last.sup && last.e.length === 0) {
      if (sub) last.sub = sub;
      if (sup) last.sup = sup;
      last.e = this.naryOperand(depth);
      out.push(last);
      return;
    }
    if (base.length === 1 && last?.k === 'func' && last.e.length === 0 && sub && !sup) {
      // \lim_{n\to\infty} a_n: the limit under the name, then the operand.
      this.count();
      out.push({ k: 'func', name: [{ k: 'lim', pos: 'low', e: last.name, lim: sub }], e: this.funcOperand(depth) });
      return;
    }
    if (base.length === 1 && last?.k === 'group') {
      this.count();
      if (last.pos === 'bot' && sub && !sup) return void out.push({ k: 'lim', pos: 'low', e: [last], lim: sub });
      if (last.pos === 'top' && sup && !sub) return void out.push({ k: 'lim', pos: 'upp', e: [last], lim: sup });
    }
    // A script applies to the last character of a run ("ab^2" is a times b squared).
    let e = base;
    if (last?.k === 'run' && [...last.text].length > 1 && !last.normal) {
      const chars = [...last.text];
      base[base.length - 1] = { ...last, text: chars.slice(0, -1).join('') };
      out.push(...base);
      e = [{ ...last, text: chars[chars.length - 1]! }];
    } else if (base.length > 1) {
      out.push(...base.slice(0, -1));
      e = [last!];
    }
    this.count();
    if (sub && sup) out.push({ k: 'subsup', e, sub, sup });
    else if (sub) out.push({ k: 'sub', e, sub });
    else out.push({ k: 'sup', e, sup: sup! });
  }

  private naryOperand(depth: number): MathRow {
    while (this.peek()?.k === 'char' && /^\s$/.test((this.peek() as { v: string }).v)) this.i++;
    const tok = this.peek();
    if (!tok || tok.k === 'close' || tok.k === 'amp' || tok.k === 'nl') return [];
    if (tok.k === 'cmd' && (tok.v === 'right' || tok.v === 'end' || tok.v === 'middle')) return [];
    const out: MathRow = [];
    if (tok.k === 'open') return this.arg(depth);
    this.atomWithScripts(out, depth);
    return out;
  }

  private funcOperand(depth: number): MathRow {
    return this.naryOperand(depth);
  }

  private atom(out: MathRow, depth: number): void {
    const tok = this.t[this.i++];
    if (!tok) return;
    switch (tok.k) {
      case 'open': {
        const r = this.row(depth + 1);
        if (this.peek()?.k === 'close') this.i++;
        for (const n of r) this.node(out, n);
        return;
      }
      case 'char': {
        if (tok.v === ' ' || tok.v === '\t' || tok.v === '\n' || tok.v === '\r') return;
        if (tok.v === '~') return this.node(out, { k: 'run', text: ' ' });
        if (tok.v === "'") return this.node(out, { k: 'run', text: '′' });
        return this.node(out, { k: 'run', text: tok.v });
      }
      case 'sub':
      case 'sup':
        // A script with nothing before it: atomWithScripts reads it on an empty base.
        this.i--;
        return;
      case 'amp':
      case 'nl':
      case 'close':
        return;
      case 'cmd':
        return this.command(tok.v, out, depth);
    }
  }

  private command(name: string, out: MathRow, depth: number): void {
    const argRow = () => this.arg(depth);
    const add = (n: MathNode) => this.node(out, n);
    switch (name) {
      case 'frac':
      case 'dfrac':
      case 'tfrac':
      case 'cfrac': {
        const num = argRow();
        return add({ k: 'frac', type: 'bar', num, den: argRow() });
      }
      case 'binom':
      case 'dbinom':
      case 'tbinom': {
        const num = argRow();
        const den = argRow();
        return add({ k: 'delim', open: '(', close: ')', sep: '', items: [[{ k: 'frac', type: 'noBar', num, den }]] });
      }
      case 'genfrac': {
        const open = this.textArg();
        const close = this.textArg();
        const thickness = this.textArg();
        this.textArg();
        const num = argRow();
        const den = argRow();
        const type: FracType = /^\s*0/.test(thickness) ? 'noBar' : 'bar';
        const f: MathNode = { k: 'frac', type, num, den };
        return add(
          open || close
            ? { k: 'delim', open: DELIMS[open.replace(/^\\/, '')] ?? open, close: DELIMS[close.replace(/^\\/, '')] ?? close, sep: '', items: [[f]] }
            : f,
        );
      }
      case 'sqrt': {
        const deg = this.optional(depth);
        return add({ k: 'rad', deg: deg?.length ? deg : undefined, e: argRow() });
      }
      case 'text':
      case 'textrm':
      case 'textit':
      case 'mbox':
      case 'textnormal':
      case 'textup': {
        const text = this.textArg();
        return text ? add({ k: 'run', text, normal: true }) : undefined;
      }
      case 'mathrm':
      case 'mathbf':
      case 'boldsymbol':
      case 'bm':
      case 'mathit':
      case 'textbf': {
        const style = name === 'mathrm' ? 'p' : name === 'mathit' ? 'i' : name === 'boldsymbol' || name === 'bm' ? 'bi' : 'b';
        for (const n of argRow()) add(n.k === 'run' ? { ...n, style } : n);
        return;
      }
      case 'operatorname': {
        const text = this.textArg();
        return add({ k: 'func', name: [{ k: 'run', text, style: 'p' }], e: [] });
      }
      case 'overline':
      case 'underline':
        return add({ k: 'bar', pos: name === 'overline' ? 'top' : 'bot', e: argRow() });
      case 'overbrace':
      case 'underbrace':
        return add({ k: 'group', chr: name === 'overbrace' ? '\u23de' : '\u23df', pos: name === 'overbrace' ? 'top' : 'bot', e: argRow() });
      case 'overset':
      case 'stackrel':
      case 'underset': {
        const lim = argRow();
        return add({ k: 'lim', pos: name === 'underset' ? 'low' : 'upp', e: argRow(), lim });
      }
      case 'boxed':
      case 'fbox':
        return add({ k: 'box', border: true, e: argRow() });
      case 'phantom':
        return add({ k: 'phantom', e: argRow() });
      case 'left':
        return add(this.delimited(depth));
      case 'begin':
        return this.environment(out, depth);
      case 'right':
      case 'end':
      case 'middle':
        return;
    }
    if (ACCENT_CHAR.has(name)) return add({ k: 'acc', chr: ACCENT_CHAR.get(name)!, e: argRow() });
    const chr = TEX_CHAR.get(name);
    if (chr && NARY_CHARS.has(chr)) {
      let limLoc: 'undOvr' | 'subSup' = INTEGRALS.has(chr) ? 'subSup' : 'undOvr';
      const next = this.peek();
      if (next?.k === 'cmd' && (next.v === 'limits' || next.v === 'nolimits')) {
        limLoc = next.v === 'limits' ? 'undOvr' : 'subSup';
        this.i++;
      }
      const n: MathNode = { k: 'nary', chr, limLoc, e: [] };
      // Without scripts the operand follows at once (atomWithScripts fills it when scripts come first).
      const after = this.peek();
      if (after?.k !== 'sub' && after?.k !== 'sup') n.e = this.naryOperand(depth);
      this.count();
      out.push(n);
      return;
    }
    if (TEX_FUNCTIONS.has(name)) {
      this.count();
      const n: MathNode = { k: 'func', name: [{ k: 'run', text: name, style: 'p' }], e: [] };
      const after = this.peek();
      if (after?.k !== 'sub' && after?.k !== 'sup') n.e = this.funcOperand(depth);
      out.push(n);
      return;
    }
    if (chr !== undefined) return add({ k: 'run', text: chr });
    if (SPACES.has(name)) return add({ k: 'run', text: ' ' });
    if (name.length === 1) return add({ k: 'run', text: name === '|' ? '‖' : name });
    if (name === 'backslash') return add({ k: 'run', text: '\\' });
    if (IGNORED.has(name)) return;
    const text = TEXT_COMMANDS[name];
    if (text !== undefined) return add({ k: 'run', text });
    // An unknown command: its name, upright, so nothing silently disappears.
    return add({ k: 'run', text: name, style: 'p' });
  }

  private delimiter(): string {
    const tok = this.t[this.i++];
    if (!tok) return '';
    if (tok.k === 'char') return DELIMS[tok.v] ?? tok.v;
    if (tok.k === 'cmd') return DELIMS[tok.v === '|' ? '|cmd' : tok.v] ?? TEX_CHAR.get(tok.v) ?? '';
    return '';
  }

  /** \left X … \middle Y … \right Z (after \left). */
  private delimited(depth: number): MathNode {
    const open = this.delimiter();
    const items: MathRow[] = [this.row(depth + 1)];
    let sep = '';
    for (let tok = this.peek(); tok?.k === 'cmd' && tok.v === 'middle'; tok = this.peek()) {
      this.i++;
      sep = this.delimiter();
      items.push(this.row(depth + 1));
    }
    let close = '';
    if (this.peek()?.k === 'cmd' && (this.peek() as { v: string }).v === 'right') {
      this.i++;
      close = this.delimiter();
    }
    // A single item holding only a matrix: the matrix environments' delimiters.
    return { k: 'delim', open, close, sep, items };
  }

  /** \begin{name} … \end{name} (after \begin). */
  private environment(out: MathRow, depth: number): void {
    const name = this.textArg().replace(/\*$/, '');
    if (name === 'array') this.textArg();
    const rows: MathRow[][] = [];
    let cells: MathRow[] = [];
    for (;;) {
      cells.push(this.row(depth + 1, true));
      const tok = this.peek();
      if (!tok) break;
      this.i++;
      if (tok.k === 'amp') continue;
      if (tok.k === 'nl') {
        rows.push(cells);
        cells = [];
        continue;
      }
      if (tok.k === 'cmd' && tok.v === 'end') {
        this.textArg();
        break;
      }
      // A stray } or \right inside an environment ends it.
      break;
    }
    if (cells.some((c) => c.length) || cells.length > 1) rows.push(cells);
    this.count();
    if (/^(aligned|align|alignat|split|gathered|gather|eqnarray|multline|flalign)$/.test(name)) {
      // Equation array rows keep their alignment points as '&' in their text (OMML's convention).
      out.push({ k: 'eqarr', rows: rows.map((r) => joinCells(r)) });
      return;
    }
    if (name === 'cases') {
      out.push({ k: 'delim', open: '{', close: '', sep: '', items: [[{ k: 'eqarr', rows: rows.map((r) => joinCells(r)) }]] });
      return;
    }
    const matrix: MathNode = { k: 'matrix', rows };
    const delims = MATRIX_DELIMS[name];
    out.push(delims ? { k: 'delim', open: delims[0], close: delims[1], sep: '', items: [[matrix]] } : matrix);
  }
}

/** Adjacent runs of the same style as one run (as the OMML reader merges them). */
function mergeRuns(row: MathRow): MathRow {
  const out: MathRow = [];
  for (const n of row) {
    const last = out[out.length - 1];
    if (n.k === 'run' && last?.k === 'run' && last.style === n.style && last.normal === n.normal)
      out[out.length - 1] = { ...last, text: last.text + n.text };
    else out.push(n);
  }
  return out;
}

/** Cells of an aligned row as one row with '&' between them. */
function joinCells(cells: MathRow[]): MathRow {
  const out: MathRow = [];
  cells.forEach((c, i) => {
    if (i > 0) out.push({ k: 'run', text: '&' });
    out.push(...c);
  });
  // Adjacent runs merge, as the OMML reader merges them.
  const merged: MathRow = [];
  for (const n of out) {
    const last = merged[merged.length - 1];
    if (n.k === 'run' && last?.k === 'run' && !last.normal && !n.normal && last.style === n.style)
      merged[merged.length - 1] = { ...last, text: last.text + n.text };
    else merged.push(n);
  }
  return merged;
}

/** Text-mode commands that are characters. */
const TEXT_COMMANDS: Record<string, string> = {
  textbackslash: '\\',
  textasciitilde: '~',
  textasciicircum: '^',
  textless: '<',
  textgreater: '>',
  textbar: '|',
  textasciigrave: '`',
  textellipsis: '…',
  ldots: '…',
  dots: '…',
};

export interface TexReadOptions {
  count: () => void;
  warn?: (message: string) => void;
}

/** An equation's row from TeX (without its dollars). */
export function readTex(tex: string, options: TexReadOptions): MathRow {
  const reader = new TexReader(tokenize(tex), options.count, options.warn);
  const out: MathRow = [];
  // Stray closing braces or \right/\end at the top level are skipped, not the end of the equation.
  for (let guard = 0; guard <= tex.length; guard++) {
    out.push(...reader.row(0));
    if (!reader.skipStray()) break;
  }
  return out;
}
