/**
 * Symbol fonts → Unicode. Word stores a character of a symbol font as its position in the font (w:sym
 * w:font w:char="F0B7", or text in a run set in the font, at U+F020–U+F0FF or, from older documents, at
 * 0x20–0xFF): the character it shows depends on the font. The tables below give each position the Unicode
 * character of the font's published encoding:
 * - Symbol: Adobe's "Adobe Symbol Encoding to Unicode" (https://www.unicode.org/Public/MAPPINGS/VENDORS/ADOBE/symbol.txt),
 *   with the glyph fragments (bracket and brace pieces, arrow extenders) at the Unicode 3.2 characters
 *   Apple's Mac OS Symbol table uses (https://www.unicode.org/Public/MAPPINGS/VENDORS/APPLE/SYMBOL.TXT)
 *   instead of Adobe's corporate-use code points;
 * - Wingdings: the mapping of the Wingdings and Webdings proposal that Unicode 7.0 encoded (Michel
 *   Suignard, "Proposal to add Wingdings and Webdings Symbols", UTC L2/11-149, and its status table WG2
 *   N4384 / L2/12-368);
 * - Wingdings 2 and Webdings: the positions of the same proposal that documents use as marks (ballot boxes,
 *   check marks, crosses, bullets, circled numbers); Wingdings 3 none yet. A position without an entry keeps
 *   its private-use character (U+F0xx): nothing is lost, and a reader with the font installed still sees the
 *   glyph.
 */

/** Positions 0x20–0xFF of a font → Unicode (strings: some characters are outside the BMP). */
type FontTable = ReadonlyMap<number, string>;

const table = (start: number, chars: string): Map<number, string> => {
  const m = new Map<number, string>();
  let i = start;
  for (const c of chars) {
    if (c !== '\u0000') m.set(i, c);
    i++;
  }
  return m;
};

const SYMBOL: FontTable = new Map([
  ...table(0x20, ' !∀#∃%&∋()∗+,−./0123456789:;<=>?'),
  ...table(0x40, '≅ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ[∴]⊥_'),
  ...table(0x60, '‾αβχδεφγηιϕκλμνοπθρστυϖωξψζ{|}∼'),
  ...table(0xa0, '€ϒ′≤⁄∞ƒ♣♦♥♠↔←↑→↓°±″≥×∝∂•÷≠≡≈…⏐⎯↵'),
  ...table(0xc0, 'ℵℑℜ℘⊗⊕∅∩∪⊃⊇⊄⊂⊆∈∉∠∇®©™∏√⋅¬∧∨⇔⇐⇑⇒⇓'),
  ...table(0xe0, '◊〈®©™∑⎛⎜⎝⎡⎢⎣⎧⎨⎩⎪\u0000〉∫⌠⎮⌡⎞⎟⎠⎤⎥⎦⎫⎬⎭'),
]);

const WINGDINGS: FontTable = new Map([
  ...table(0x20, ' 🖉✂✁👓🕭🕮🕯🕿✆🖂🖃📪📫📬📭📁📂📄🗏🗐🗄⌛🖮🖰🖲🖳🖴🖫🖬✇✍'),
  ...table(0x40, '🖎✌👌👍👎☜☞☝☟🖐☺😐☹💣☠🏳🏱✈☼💧❄🕆✞🕈✠✡☪☯ॐ☸♈♉'),
  ...table(0x60, '♊♋♌♍♎♏♐♑♒♓🙰🙵●🔾■□🞐❑❒⬧⧫◆❖⬥⌧⮹⌘🏵🏶🙶🙷'),
  ...table(0x80, '⓪①②③④⑤⑥⑦⑧⑨⑩⓿❶❷❸❹❺❻❼❽❾❿🙢🙠🙡🙣🙞🙜🙝🙟·•'),
  ...table(0xa0, '▪⚪🞆🞈◉◎🔿▪◻🟂✦★✶✴✹✵⯐⌖⟡⌑⯑✪✰🕐🕑🕒🕓🕔🕕🕖🕗🕘'),
  ...table(0xc0, '🕙🕚🕛⮰⮱⮲⮳⮴⮵⮶⮷🙪🙫🙕🙔🙗🙖🙐🙑🙒🙓⌫⌦⮘⮚⮙⮛⮈⮊⮉⮋🡨'),
  ...table(0xe0, '🡪🡩🡫🡬🡭🡯🡮🡸🡺🡹🡻🡼🡽🡿🡾⇦⇨⇧⇩⬄⇳⬀⬁⬃⬂🢬🢭🗶✔🗷🗹'),
]);

const WINGDINGS_2: FontTable = new Map([
  ...table(0x4f, '🗴🗸🗵☑⮽☒⮾⮿'),
  ...table(0x69, '⓪①②③④⑤⑥⑦⑧⑨⑩⓿❶❷❸❹❺❻❼❽❾❿'),
  ...table(0x95, '⋅🞄⦁●○🞅🞇🞉⊙⦿🞌🞍◾■□'),
  ...table(0xa8, '▣'),
  ...table(0xad, '⬩⬥◇'),
  ...table(0xb7, '⬧◊'),
]);

/** Wingdings 3 (arrows and arrowheads): no entries yet; its characters keep their private-use code points. */
const WINGDINGS_3: FontTable = new Map();

/** Webdings: the check mark and the cross documents use as marks. */
const WEBDINGS: FontTable = new Map([...table(0x61, '✔'), ...table(0x72, '✖')]);

const FONTS = new Map<string, FontTable>([
  ['symbol', SYMBOL],
  ['wingdings', WINGDINGS],
  ['wingdings 2', WINGDINGS_2],
  ['wingdings 3', WINGDINGS_3],
  ['webdings', WEBDINGS],
]);

/** The table of a symbol font (by name, any case), or undefined for any other font. */
export function symbolFont(name: string | undefined): FontTable | undefined {
  return name === undefined ? undefined : FONTS.get(name.trim().toLowerCase());
}

/**
 * A character of a symbol font as Unicode: its position (U+F020–U+F0FF, or 0x20–0xFF) looked up in the
 * font's table; a position the table lacks keeps its private-use character. Characters outside those ranges
 * are already Unicode (Word also writes real characters in runs set in Symbol).
 */
export function symbolChar(font: FontTable, code: number): string {
  const pos = code >= 0xf020 && code <= 0xf0ff ? code - 0xf000 : code >= 0x20 && code <= 0xff ? code : -1;
  if (pos < 0) return String.fromCodePoint(code);
  return font.get(pos) ?? String.fromCharCode(0xf000 + pos);
}

/** A run's text in a symbol font, as Unicode. */
export function symbolText(font: FontTable, text: string): string {
  let out = '';
  for (const c of text) out += symbolChar(font, c.codePointAt(0)!);
  return out;
}
