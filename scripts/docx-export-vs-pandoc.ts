/**
 * DOCX → Markdown and DOCX → HTML fidelity over the shared DOCX corpus, Folio against pandoc's own
 * `pandoc -f docx -t gfm` / `-t html` on the same files (an oracle nobody here wrote), both scored against what
 * each DOCX holds (test/convert/docx-export-reference.ts): text recall, headings, list items, tables, emphasis,
 * links, notes. Prints the totals and a per-file table.
 *
 *   node --import tsx scripts/docx-export-vs-pandoc.ts [--only SUBSTRING] [--findings FILE] [--json FILE]
 *
 * --only keeps the files whose name contains SUBSTRING; --findings writes, per kind, the files where Folio keeps
 * less than pandoc (Markdown); --json writes every file's scores. pandoc's outputs are cached in the temporary
 * folder (keyed by pandoc's version and the file's SHA-256): the first run takes ~2 minutes of pandoc.
 */
import fs from 'node:fs';
import { compareCorpus, findings, perFileTable, totalsTable } from '../test/convert/docx-export-compare.js';
import { corpusFiles } from '../test/convert/docx-export-measure.js';
import { cliOption } from './pandoc-spec.js';

const only = cliOption('--only');
const files = corpusFiles().filter((f) => !only || f.includes(only));
const results = await compareCorpus(files);
console.log(`DOCX export fidelity over ${files.length} corpus files (Folio vs pandoc ${only ? `, only "${only}"` : ''})\n`);
console.log(perFileTable(results));
console.log('');
console.log(totalsTable(results));
const findingsFile = cliOption('--findings');
if (findingsFile) fs.writeFileSync(findingsFile, `# DOCX export: what Folio loses where pandoc keeps it\n\n${findings(results)}`);
const jsonFile = cliOption('--json');
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(results, null, 1));
