/**
 * The code rule of the DOCX reader (src/docx/read/blocks.ts) measured on the shared corpora: every paragraph
 * whose runs with text are all set directly in a monospaced font is counted as numbered (a list item: never
 * code), prose (looksLikeProse: a paragraph in a typewriter font) or code; paragraphs in a code style are
 * counted apart. Prints the counts per corpus and, with --show, each monospaced paragraph's verdict and text.
 *
 *   node --import tsx scripts/docx-code-rule.ts [--show]
 */
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import { looksLikeProse } from '../src/docx/read/blocks.js';
import { MONOSPACE } from '../src/docx/read/styles.js';
import { CORPUS_DOCX } from '../test/helpers/corpus.js';

const show = process.argv.includes('--show');
// The external corpora when this machine has them, else the copies the tests read (docx-wild's is a subset).
const CORPORA = fs.existsSync('/work/shared/corpus')
  ? ['/work/shared/corpus/docx', '/work/shared/corpus/docx-wild']
  : [CORPUS_DOCX, path.join(import.meta.dirname, '../test/fixtures/docx-wild')];
const decode = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

for (const dir of CORPORA) {
  const n = { files: 0, mono: 0, numbered: 0, prose: 0, code: 0, codeStyle: 0 };
  for (const f of fs.readdirSync(dir).filter((x) => /\.(docx|docm|dotx)$/i.test(x))) {
    let xml: string;
    try {
      const z = unzipSync(new Uint8Array(fs.readFileSync(path.join(dir, f))), { filter: (e) => e.name === 'word/document.xml' });
      xml = z['word/document.xml'] ? strFromU8(z['word/document.xml']) : '';
    } catch {
      continue;
    }
    n.files++;
    for (const p of xml.match(/<w:p[ >][\s\S]*?<\/w:p>/g) ?? []) {
      if (/<w:pStyle w:val="(SourceCode|HTMLPreformatted|Code|MacroText|PreformattedText)"/i.test(p)) {
        n.codeStyle++;
        continue;
      }
      const body = p.replace(/<w:del\b[\s\S]*?<\/w:del>/g, '');
      const runs = (body.match(/<w:r[ >][\s\S]*?<\/w:r>/g) ?? []).filter((r) => /<w:t[ >]/.test(r));
      if (!runs.length) continue;
      const mono = runs.every((r) => {
        const font = /<w:rFonts [^>]*w:(?:ascii|hAnsi)="([^"]+)"/.exec(r)?.[1];
        return !!font && MONOSPACE.test(font.trim());
      });
      if (!mono) continue;
      n.mono++;
      const text = runs.map((r) => [...r.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => decode(m[1]!)).join('')).join('');
      const verdict = /<w:numPr>/.test(p) ? 'numbered' : looksLikeProse(text) ? 'prose' : 'code';
      n[verdict]++;
      if (show) console.log(`${verdict.padEnd(8)} ${f}: ${text.slice(0, 100)}`);
    }
  }
  console.log(
    `${path.basename(dir)}: ${n.files} files, ${n.mono} monospaced paragraphs (no code style): ${n.numbered} numbered (list items), ${n.prose} prose, ${n.code} code; ${n.codeStyle} paragraphs in a code style`,
  );
}
