/**
 * Expected structure for a DOCX without an expected output of its own (the Open-Xml-PowerTools files, the
 * corpus files other than pandoc's): what its WordprocessingML states, read by docx-export-reference.ts (which
 * shares no code with the reader under test), as fidelity.ts facts over the families it can state — headings
 * with levels, list items with depth and kind, strong/em/strike words, links, note references — plus table
 * cells (w:tc, a vertically merged one once), pictures (a:blip, v:imagedata) and equations (m:oMath) counted in
 * the body, and the words.
 * Paragraphs, quotes and code are left out: the XML does not say which paragraphs a reader should call so.
 */
import { strFromU8, unzipSync } from 'fflate';
import { docxReference } from './docx-export-reference.js';
import { mathChars, words as fidelityWords, type Facts } from './fidelity.js';

const add = (bag: Map<string, number>, key: string, n = 1) => bag.set(key, (bag.get(key) ?? 0) + n);

/** Pictures and equations of the main part's body, outside deletions and markup-compatibility fallbacks. */
const decode = (s: string) =>
  s.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (m, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : (({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" } as Record<string, string>)[e.toLowerCase()] ?? m),
  );

function bodyCounts(docx: Uint8Array): { img: number; math: number; cells: number; mathText: string[] } {
  const files = unzipSync(docx, { filter: (f) => f.name === 'word/document.xml' });
  const xml = files['word/document.xml'] ? strFromU8(files['word/document.xml']) : '';
  const body = xml
    .replace(/<mc:Fallback\b[\s\S]*?<\/mc:Fallback>/g, '')
    .replace(/<w:del\b[^>]*?\/>/g, '')
    .replace(/<w:del\b[\s\S]*?<\/w:del>/g, '');
  const count = (re: RegExp) => body.match(re)?.length ?? 0;
  // An m:oMathPara holds one display equation per m:oMath, as an inline m:oMath is one.
  // A cell a vertical merge continues is part of the cell above.
  const cells = count(/<w:tc[\s>]/g) - count(/<w:vMerge\s*\/>/g) - count(/<w:vMerge\s+w:val="continue"\s*\/>/g);
  // The text of equations, one string per equation (docx-export-reference reads w:t only).
  const mathText: string[] = [];
  for (const m of body.matchAll(/<m:oMath>([\s\S]*?)<\/m:oMath>/g)) {
    mathText.push([...m[1]!.matchAll(/<m:t(?:\s[^>]*)?>([^<]*)<\/m:t>/g)].map((t) => decode(t[1]!)).join(''));
  }
  return { img: count(/<a:blip\b/g) + count(/<v:imagedata\b/g), math: count(/<m:oMath[\s>]/g), cells, mathText };
}

export function xmlFacts(docx: Uint8Array): Facts {
  const ref = docxReference(docx);
  const keys = new Map<string, number>();
  for (const h of ref.headings) add(keys, /^h\d/.exec(h)![0]);
  for (const it of ref.items) {
    const m = /^([ou])(\d+)$/.exec(it);
    if (m) add(keys, `li:${m[2]}:${m[1] === 'o' ? 'ol' : 'ul'}`);
  }
  for (const w of ref.strong) add(keys, `strong:${w}`);
  for (const w of ref.em) add(keys, `em:${w}`);
  for (const w of ref.strike) add(keys, `s:${w}`);
  for (const l of ref.links) add(keys, `a:${l === '#' ? '#' : l.toLowerCase().replace(/\/+$/, '')}`);
  if (ref.notes) add(keys, 'fn', ref.notes);
  const { img, math, cells, mathText } = bodyCounts(docx);
  if (cells > 0) add(keys, 'cell', cells);
  if (img) add(keys, 'img', img);
  if (math) add(keys, 'math', math);
  const words = new Map<string, number>();
  for (const w of ref.words) add(words, w);
  for (const t of mathText) for (const w of fidelityWords(mathChars(t))) add(words, w);
  return { keys, words, families: new Set(['h', 'li', 'cell', 'strong', 'em', 's', 'a', 'fn', 'img', 'math']) };
}
