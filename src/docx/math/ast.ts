/**
 * An equation as Folio holds it between formats: the constructs of Office Math (OMML, ECMA-376 Part 1 §22.1),
 * which both presentation MathML and TeX can say. The OMML reader (omml-read.ts) and the TeX reader
 * (tex-read.ts) build it; the MathML writer (mathml.ts), the TeX writer (tex-write.ts) and the OMML writer
 * (src/docx/wordml/math.ts) walk it. Every list is a row: its items are laid out one after the other.
 *
 * Bounded by its readers: MAX_MATH_DEPTH levels of nesting (content deeper than that is kept as its text) and
 * every node counted against the document's node budget, so the writers' recursion is bounded too.
 */

/** A row of math items. */
export type MathRow = MathNode[];

export type FracType = 'bar' | 'skw' | 'lin' | 'noBar';

export type MathNode =
  /** Text of an m:r. `style`: m:sty (p plain, b bold, i italic, bi); `normal`: m:nor (ordinary text, not math). */
  | { k: 'run'; text: string; style?: 'p' | 'b' | 'i' | 'bi'; normal?: boolean }
  | { k: 'frac'; type: FracType; num: MathRow; den: MathRow }
  /** A radical; `deg` absent (or hidden) for a square root. */
  | { k: 'rad'; deg?: MathRow; e: MathRow }
  /** An n-ary operator (∑, ∫...) with its limits under/over it (`undOvr`) or as scripts (`subSup`), then its operand. */
  | { k: 'nary'; chr: string; limLoc: 'undOvr' | 'subSup'; sub?: MathRow; sup?: MathRow; e: MathRow }
  | { k: 'sub'; e: MathRow; sub: MathRow }
  | { k: 'sup'; e: MathRow; sup: MathRow }
  | { k: 'subsup'; e: MathRow; sub: MathRow; sup: MathRow }
  /** Scripts before the base (m:sPre). */
  | { k: 'pre'; e: MathRow; sub: MathRow; sup: MathRow }
  /** An accent over the base; `chr` as OMML gives it (usually a combining mark, default U+0302). */
  | { k: 'acc'; chr: string; e: MathRow }
  | { k: 'bar'; pos: 'top' | 'bot'; e: MathRow }
  /** Delimiters around items separated by `sep`; '' is an invisible delimiter. */
  | { k: 'delim'; open: string; close: string; sep: string; items: MathRow[] }
  | { k: 'matrix'; rows: MathRow[][] }
  /** Rows of an equation array; a '&' in a row's text is an alignment point. */
  | { k: 'eqarr'; rows: MathRow[] }
  | { k: 'func'; name: MathRow; e: MathRow }
  /** A limit under (`low`) or over (`upp`) its base: lim with n→∞ under it. */
  | { k: 'lim'; pos: 'low' | 'upp'; e: MathRow; lim: MathRow }
  /** A character (brace) under or over the base. */
  | { k: 'group'; chr: string; pos: 'top' | 'bot'; e: MathRow }
  | { k: 'box'; border: boolean; e: MathRow }
  /** Space taken by content that is not shown (m:phant with m:show off); shown content is just its row. */
  | { k: 'phantom'; e: MathRow };

/** An equation: `display` for an m:oMathPara (a block of its own), inline for an m:oMath in text. */
export interface Equation {
  display: boolean;
  row: MathRow;
}

/** Nesting of math constructs kept as structure; deeper content is kept as its text (readers). */
export const MAX_MATH_DEPTH = 32;

/** The text of a row, in order (what a reader keeps of content nested too deeply, and the plain-text fallback). */
export function mathText(row: MathRow): string {
  let s = '';
  const go = (r: MathRow) => {
    for (const n of r) {
      switch (n.k) {
        case 'run':
          s += n.text;
          break;
        case 'frac':
          go(n.num);
          s += '/';
          go(n.den);
          break;
        case 'rad':
          s += '√';
          go(n.e);
          break;
        case 'nary':
          s += n.chr;
          if (n.sub) go(n.sub);
          if (n.sup) go(n.sup);
          go(n.e);
          break;
        case 'sub':
        case 'sup':
        case 'subsup':
        case 'pre':
          go(n.e);
          if ('sub' in n) go(n.sub);
          if ('sup' in n) go(n.sup);
          break;
        case 'delim':
          s += n.open;
          n.items.forEach((it, i) => {
            if (i) s += n.sep;
            go(it);
          });
          s += n.close;
          break;
        case 'matrix':
          for (const row of n.rows) for (const cell of row) go(cell);
          break;
        case 'eqarr':
          for (const row of n.rows) go(row);
          break;
        case 'func':
          go(n.name);
          go(n.e);
          break;
        case 'lim':
          go(n.e);
          go(n.lim);
          break;
        case 'phantom':
          break;
        default:
          go(n.e);
      }
    }
  };
  go(row);
  return s;
}
