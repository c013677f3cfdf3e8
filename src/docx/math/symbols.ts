/**
 * The characters of equations and their TeX names, in both directions: the TeX writer names what Word stores
 * as Unicode (π → \pi), the TeX reader turns names back into the characters OMML stores. The names are those
 * of plain TeX and LaTeX's amsmath/amssymb (what pandoc, KaTeX and MathJax read); a character without a name
 * is written as itself (KaTeX and MathJax read Unicode in math).
 */

/** Unicode character → TeX command (without the backslash). */
export const TEX_NAME: ReadonlyMap<string, string> = new Map<string, string>([
  // Greek, lower case (ϵ is \epsilon, ε \varepsilon as in unicode-math).
  ['α', 'alpha'],
  ['β', 'beta'],
  ['γ', 'gamma'],
  ['δ', 'delta'],
  ['ϵ', 'epsilon'],
  ['ε', 'varepsilon'],
  ['ζ', 'zeta'],
  ['η', 'eta'],
  ['θ', 'theta'],
  ['ϑ', 'vartheta'],
  ['ι', 'iota'],
  ['κ', 'kappa'],
  ['λ', 'lambda'],
  ['μ', 'mu'],
  ['ν', 'nu'],
  ['ξ', 'xi'],
  ['π', 'pi'],
  ['ϖ', 'varpi'],
  ['ρ', 'rho'],
  ['ϱ', 'varrho'],
  ['σ', 'sigma'],
  ['ς', 'varsigma'],
  ['τ', 'tau'],
  ['υ', 'upsilon'],
  ['ϕ', 'phi'],
  ['φ', 'varphi'],
  ['χ', 'chi'],
  ['ψ', 'psi'],
  ['ω', 'omega'],
  // Greek, upper case with a shape of its own.
  ['Γ', 'Gamma'],
  ['Δ', 'Delta'],
  ['Θ', 'Theta'],
  ['Λ', 'Lambda'],
  ['Ξ', 'Xi'],
  ['Π', 'Pi'],
  ['Σ', 'Sigma'],
  ['Υ', 'Upsilon'],
  ['Φ', 'Phi'],
  ['Ψ', 'Psi'],
  ['Ω', 'Omega'],
  // Binary operators.
  ['±', 'pm'],
  ['∓', 'mp'],
  ['×', 'times'],
  ['÷', 'div'],
  ['⋅', 'cdot'],
  ['·', 'cdot'],
  ['∗', 'ast'],
  ['∘', 'circ'],
  ['∙', 'bullet'],
  ['⊕', 'oplus'],
  ['⊖', 'ominus'],
  ['⊗', 'otimes'],
  ['⊘', 'oslash'],
  ['⊙', 'odot'],
  ['∩', 'cap'],
  ['∪', 'cup'],
  ['∧', 'wedge'],
  ['∨', 'vee'],
  ['∖', 'setminus'],
  ['†', 'dagger'],
  ['‡', 'ddagger'],
  ['⋆', 'star'],
  ['⊎', 'uplus'],
  ['⊓', 'sqcap'],
  ['⊔', 'sqcup'],
  // Relations.
  ['≤', 'leq'],
  ['≥', 'geq'],
  ['≠', 'neq'],
  ['≈', 'approx'],
  ['≡', 'equiv'],
  ['≅', 'cong'],
  ['∼', 'sim'],
  ['≃', 'simeq'],
  ['∝', 'propto'],
  ['≪', 'll'],
  ['≫', 'gg'],
  ['≺', 'prec'],
  ['≻', 'succ'],
  ['⪯', 'preceq'],
  ['⪰', 'succeq'],
  ['∈', 'in'],
  ['∉', 'notin'],
  ['∋', 'ni'],
  ['⊂', 'subset'],
  ['⊃', 'supset'],
  ['⊆', 'subseteq'],
  ['⊇', 'supseteq'],
  ['⊊', 'subsetneq'],
  ['⊋', 'supsetneq'],
  ['⊥', 'perp'],
  ['∥', 'parallel'],
  ['∣', 'mid'],
  ['⊢', 'vdash'],
  ['⊨', 'models'],
  ['≐', 'doteq'],
  ['≜', 'triangleq'],
  ['≔', 'coloneqq'],
  // Arrows.
  ['←', 'leftarrow'],
  ['→', 'rightarrow'],
  ['↑', 'uparrow'],
  ['↓', 'downarrow'],
  ['↔', 'leftrightarrow'],
  ['⇐', 'Leftarrow'],
  ['⇒', 'Rightarrow'],
  ['⇔', 'Leftrightarrow'],
  ['⇑', 'Uparrow'],
  ['⇓', 'Downarrow'],
  ['↦', 'mapsto'],
  ['⟶', 'longrightarrow'],
  ['⟵', 'longleftarrow'],
  ['⟹', 'Longrightarrow'],
  ['⟸', 'Longleftarrow'],
  ['⟺', 'Longleftrightarrow'],
  ['↗', 'nearrow'],
  ['↘', 'searrow'],
  ['↪', 'hookrightarrow'],
  ['⇌', 'rightleftharpoons'],
  // Miscellaneous symbols.
  ['∞', 'infty'],
  ['∂', 'partial'],
  ['∇', 'nabla'],
  ['∀', 'forall'],
  ['∃', 'exists'],
  ['∄', 'nexists'],
  ['∅', 'emptyset'],
  ['¬', 'neg'],
  ['ℏ', 'hbar'],
  ['ℓ', 'ell'],
  ['℘', 'wp'],
  ['ℜ', 'Re'],
  ['ℑ', 'Im'],
  ['ℵ', 'aleph'],
  ['∠', 'angle'],
  ['△', 'triangle'],
  ['′', 'prime'],
  ['…', 'ldots'],
  ['⋯', 'cdots'],
  ['⋮', 'vdots'],
  ['⋱', 'ddots'],
  ['∴', 'therefore'],
  ['∵', 'because'],
  ['°', 'circ'],
  ['⟨', 'langle'],
  ['⟩', 'rangle'],
  ['⌊', 'lfloor'],
  ['⌋', 'rfloor'],
  ['⌈', 'lceil'],
  ['⌉', 'rceil'],
  ['‖', '|'],
  // Large operators (n-ary).
  ['∑', 'sum'],
  ['∏', 'prod'],
  ['∐', 'coprod'],
  ['∫', 'int'],
  ['∬', 'iint'],
  ['∭', 'iiint'],
  ['∮', 'oint'],
  ['∯', 'oiint'],
  ['∰', 'oiiint'],
  ['⋃', 'bigcup'],
  ['⋂', 'bigcap'],
  ['⋁', 'bigvee'],
  ['⋀', 'bigwedge'],
  ['⨁', 'bigoplus'],
  ['⨂', 'bigotimes'],
  ['⨀', 'bigodot'],
  ['⨄', 'biguplus'],
  ['⨆', 'bigsqcup'],
]);

/** TeX command (without the backslash) → Unicode character; aliases included. */
export const TEX_CHAR: ReadonlyMap<string, string> = (() => {
  const m = new Map<string, string>();
  for (const [ch, name] of TEX_NAME) if (!m.has(name)) m.set(name, ch);
  const alias: Array<[string, string]> = [
    ['le', '≤'],
    ['ge', '≥'],
    ['ne', '≠'],
    ['to', '→'],
    ['gets', '←'],
    ['implies', '⟹'],
    ['iff', '⟺'],
    ['land', '∧'],
    ['lor', '∨'],
    ['lnot', '¬'],
    ['owns', '∋'],
    ['dots', '…'],
    ['lbrace', '{'],
    ['rbrace', '}'],
    ['lbrack', '['],
    ['rbrack', ']'],
    ['vert', '|'],
    ['Vert', '‖'],
    ['lvert', '|'],
    ['rvert', '|'],
    ['lVert', '‖'],
    ['rVert', '‖'],
    ['varnothing', '∅'],
    ['smallint', '∫'],
    ['colon', ':'],
    ['lt', '<'],
    ['gt', '>'],
    ['degree', '°'],
    ['cdotp', '⋅'],
    ['centerdot', '⋅'],
    ['circ', '∘'],
  ];
  for (const [name, ch] of alias) m.set(name, ch);
  return m;
})();

/** n-ary operators: the characters an m:nary may carry that TeX has a large operator for. */
export const NARY_CHARS = new Set(['∑', '∏', '∐', '∫', '∬', '∭', '∮', '∯', '∰', '⋃', '⋂', '⋁', '⋀', '⨁', '⨂', '⨀', '⨄', '⨆']);

/** Integrals: TeX sets their limits as scripts unless told `\limits`. */
export const INTEGRALS = new Set(['∫', '∬', '∭', '∮', '∯', '∰']);

/** Function names TeX has a command for (\sin...); others are written \operatorname{…}. */
export const TEX_FUNCTIONS = new Set([
  'arccos',
  'arcsin',
  'arctan',
  'arg',
  'cos',
  'cosh',
  'cot',
  'coth',
  'csc',
  'deg',
  'det',
  'dim',
  'exp',
  'gcd',
  'hom',
  'inf',
  'ker',
  'lg',
  'lim',
  'liminf',
  'limsup',
  'ln',
  'log',
  'max',
  'min',
  'Pr',
  'sec',
  'sin',
  'sinh',
  'sup',
  'tan',
  'tanh',
]);

/** Accents: OMML's character (a combining mark, or its spacing form) → TeX command. */
export const ACCENTS: ReadonlyMap<string, string> = new Map([
  ['\u0302', 'hat'],
  ['^', 'hat'],
  ['\u02c6', 'hat'],
  ['\u0303', 'tilde'],
  ['~', 'tilde'],
  ['\u02dc', 'tilde'],
  ['\u0304', 'bar'],
  ['\u0305', 'overline'],
  ['\u00af', 'bar'],
  ['\u0307', 'dot'],
  ['\u02d9', 'dot'],
  ['\u0308', 'ddot'],
  ['\u00a8', 'ddot'],
  ['\u20db', 'dddot'],
  ['\u0301', 'acute'],
  ['\u00b4', 'acute'],
  ['\u0300', 'grave'],
  ['`', 'grave'],
  ['\u0306', 'breve'],
  ['\u02d8', 'breve'],
  ['\u030c', 'check'],
  ['\u02c7', 'check'],
  ['\u20d7', 'vec'],
  ['\u20d6', 'overleftarrow'],
  ['\u20e1', 'overleftrightarrow'],
  ['\u030a', 'mathring'],
]);

/** TeX accent command → the combining character OMML stores. */
export const ACCENT_CHAR: ReadonlyMap<string, string> = new Map([
  ['hat', '\u0302'],
  ['widehat', '\u0302'],
  ['tilde', '\u0303'],
  ['widetilde', '\u0303'],
  ['bar', '\u0304'],
  ['dot', '\u0307'],
  ['ddot', '\u0308'],
  ['dddot', '\u20db'],
  ['acute', '\u0301'],
  ['grave', '\u0300'],
  ['breve', '\u0306'],
  ['check', '\u030c'],
  ['vec', '\u20d7'],
  ['overrightarrow', '\u20d7'],
  ['overleftarrow', '\u20d6'],
  ['overleftrightarrow', '\u20e1'],
  ['mathring', '\u030a'],
]);

/**
 * The spacing form of an accent, for MathML's <mo> over the base (a combining mark alone in an <mo> renders
 * badly in browsers).
 */
export function spacingAccent(chr: string): string {
  switch (chr) {
    case '\u0302':
      return '^';
    case '\u0303':
      return '~';
    case '\u0304':
    case '\u0305':
      return '\u00af';
    case '\u0307':
      return '\u02d9';
    case '\u0308':
      return '\u00a8';
    case '\u20db':
      return '\u20db';
    case '\u0301':
      return '\u00b4';
    case '\u0300':
      return '`';
    case '\u0306':
      return '\u02d8';
    case '\u030c':
      return '\u02c7';
    case '\u20d7':
      return '\u2192';
    case '\u20d6':
      return '\u2190';
    case '\u20e1':
      return '\u2194';
    case '\u030a':
      return '\u02da';
    default:
      return chr;
  }
}

/** Delimiter character → its TeX form after \left / \right ('' is the invisible '.'). */
export function texDelimiter(c: string): string {
  switch (c) {
    case '':
      return '.';
    case '{':
      return '\\{';
    case '}':
      return '\\}';
    case '⟨':
    case '〈':
      return '\\langle';
    case '⟩':
    case '〉':
      return '\\rangle';
    case '‖':
      return '\\Vert';
    case '|':
      return '\\vert';
    case '⌊':
      return '\\lfloor';
    case '⌋':
      return '\\rfloor';
    case '⌈':
      return '\\lceil';
    case '⌉':
      return '\\rceil';
    case '<':
      return '\\langle';
    case '>':
      return '\\rangle';
    case '[':
      return '\\lbrack';
    case ']':
      return '\\rbrack';
    case '(':
    case ')':
    case '/':
      return c;
    default:
      return '.';
  }
}
