/**
 * Merge's input bounds: hostile PDFs reach pdf-lib only through src/pdf's openForAuthoring (the bounded
 * reader first), so each case here is answered at once — merged from what the reader could read, or a 422
 * naming the input — and never by pdf-lib's own parser looping (the 603-byte xref stream kept mergePdfs busy
 * for more than 90 s) or inflating an object stream without a cap (a 1.5 MB file took the process to 2.7 GB,
 * outside an engine thread's heap limit). Then pyHanko's reader test files (test/fixtures/pdf-validation;
 * every door, not only merge's, in test/pdf/pdf-validation.test.ts): each merges or is a 422, never another error.
 *
 * Memory is judged by the process's peak RSS (getrusage maxRSS), which also sees zlib's off-heap buffers:
 * each case may raise it by MAX_RSS_GROWTH at most. Generous on purpose; the failure it guards is gigabytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { mergePdfs, type MergeResult } from '../../src/merge/engine.js';
import { buildPdf, simplePdf } from '../adversarial/generators.js';
import { pdfinfoPages } from './helpers.js';

const MiB = 1024 * 1024;
const MAX_RSS_GROWTH = 768 * MiB;
/** Far beyond what any case needs on a loaded machine, far below the 90 s the 603-byte file used to take. */
const CASE_TIMEOUT_MS = 30_000;

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';
const PAGES = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
const PAGE = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>';

/** A tail of `buildPdf`: an xref stream (object `num`) with the given dictionary entries over raw rows. */
const xrefStreamTail = (num: number, dict: string, rows: Buffer) => (_offsets: number[], end: number) =>
  `${num} 0 obj\n<< /Type /XRef /Root 1 0 R ${dict} /Length ${rows.length} >>\nstream\n${rows.toString('latin1')}\nendstream\nendobj\nstartxref\n${end}\n%%EOF\n`;

/** zlib data inflating to `total` zero bytes: one full-flush deflate chunk of 16 MB, repeated (~16 KB each). */
function zeroBomb(total: number): Buffer {
  const chunkSize = 16 * MiB;
  const chunk = zlib.deflateRawSync(Buffer.alloc(chunkSize), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const n = Math.ceil(total / chunkSize);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((n * chunkSize) % 65521) * 65536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(n).fill(chunk), Buffer.from([0x03, 0x00]), adler]);
}

/** An object stream (object 4) of ~1.5 MB that inflates to 1.5 GB, holding object 5, which the page uses. */
function objectStreamBomb(): Buffer {
  const z = zeroBomb(1536 * MiB);
  const stream = Buffer.concat([
    Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`, 'latin1'),
    z,
    Buffer.from('\nendstream', 'latin1'),
  ]);
  const page = PAGE.replace('>>', '/Big 5 0 R >>');
  return buildPdf([CATALOG, PAGES, page, stream], {
    tail: (o, end) => {
      const rows = Buffer.alloc(7 * 6);
      [
        [0, 0, 0],
        [1, o[0]!, 0],
        [1, o[1]!, 0],
        [1, o[2]!, 0],
        [1, o[3]!, 0],
        [2, 4, 0],
        [1, end, 0],
      ].forEach(([t, a, b], i) => {
        rows[i * 6] = t!;
        rows.writeUInt32BE(a!, i * 6 + 1);
        rows[i * 6 + 5] = b!;
      });
      return xrefStreamTail(6, '/Size 7 /W [1 4 1]', rows)(o, end);
    },
  });
}

type Outcome = { merged: MergeResult } | { refused: FolioError };

/** Merges `hostile` (input 0) with an honest one-page PDF, watching the process's peak RSS. */
async function mergeHostile(hostile: Uint8Array): Promise<Outcome> {
  const before = process.resourceUsage().maxRSS * 1024;
  let outcome: Outcome;
  try {
    const merged = await mergePdfs(
      [
        { pdf: hostile, fileName: 'hostile.pdf' },
        { pdf: simplePdf(), fileName: 'honest.pdf' },
      ],
      { outline: true, pageLabels: true },
    );
    outcome = { merged };
  } catch (e) {
    // Only a FolioError is an answer; anything else would be a 500.
    if (!(e instanceof FolioError)) throw e;
    outcome = { refused: e };
  }
  expect(process.resourceUsage().maxRSS * 1024 - before).toBeLessThan(MAX_RSS_GROWTH);
  return outcome;
}

/** The case was merged: the hostile input's readable page and the honest page, in a PDF poppler reads. */
function expectMerged(o: Outcome, pages = 2): void {
  if (!('merged' in o)) throw new Error(`expected a merge, got ${o.refused.status} ${o.refused.message}`);
  expect(o.merged.pageCount).toBe(pages);
  expect(pdfinfoPages(o.merged.pdf)).toBe(pages);
}

/** The case was refused: a 422 naming input 0 and the problem. */
function expectRefused(o: Outcome, problem: RegExp): void {
  if (!('refused' in o)) throw new Error(`expected a 422, got a ${o.merged.pageCount}-page merge`);
  expect(o.refused.status).toBe(422);
  expect(o.refused.code).toBe('UNPROCESSABLE_DOCUMENT');
  expect(o.refused.details).toEqual([{ field: 'documents.0', issue: expect.stringMatching(/^hostile\.pdf: /) }]);
  expect(o.refused.details![0]!.issue).toMatch(problem);
}

describe('merge bounds: hostile cross-reference data', () => {
  it(
    'the 603-byte xref stream (/W [0 4000000 0], /Index [0 10^9]) is read around, not looped over',
    async () => {
      const bytes = buildPdf([CATALOG, PAGES, PAGE], {
        tail: xrefStreamTail(4, '/Size 1000000000 /W [0 4000000 0] /Index [0 1000000000]', Buffer.alloc(16, 1)),
      });
      expect(bytes.length).toBeLessThan(700);
      // The section is unusable: the reader finds the objects by their bodies, as sign does.
      expectMerged(await mergeHostile(bytes));
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'an xref stream /W [100 100 100] over /Index 2^31 and one /W [4 4 4] over 20 million entries with 300 bytes',
    async () => {
      // /W wider than 8 bytes: the section is unusable, and the reader finds the objects by their bodies.
      const wide = buildPdf([CATALOG, PAGES, PAGE], {
        tail: xrefStreamTail(4, '/Size 2147483647 /W [100 100 100] /Index [0 2147483647 2147483647 2147483647]', Buffer.alloc(300)),
      });
      expectMerged(await mergeHostile(wide));
      // Legal /W: the rows are read as far as they go; the /Size declared is past what a PDF may number.
      const claims = buildPdf([CATALOG, PAGES, PAGE], {
        tail: xrefStreamTail(4, '/Size 20000000 /W [4 4 4] /Index [0 20000000]', Buffer.alloc(300)),
      });
      expectRefused(await mergeHostile(claims), /\/Size 20000000, beyond the PDF limit/);
      // The same rows under an honest /Size: the unusable section is read around.
      const honestSize = buildPdf([CATALOG, PAGES, PAGE], { tail: xrefStreamTail(4, '/Size 5 /W [4 4 4] /Index [0 20000000]', Buffer.alloc(300)) });
      expectMerged(await mergeHostile(honestSize));
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'an xref stream whose rows hold more entries than the reader reads is a 422 naming them',
    async () => {
      const rows = zlib.deflateSync(Buffer.alloc(1_200_000));
      const bytes = buildPdf([CATALOG, PAGES, PAGE], { tail: xrefStreamTail(4, '/Size 1200000 /W [0 1 0] /Filter /FlateDecode', rows) });
      expectRefused(await mergeHostile(bytes), /cross-reference entries/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'xref sections whose /Prev point at each other and at themselves',
    async () => {
      const bytes = buildPdf([CATALOG, PAGES, PAGE], {
        tail: (offsets, end) => {
          let table = 'xref\n0 4\n0000000000 65535 f \n';
          for (const o of offsets) table += `${String(o).padStart(10, '0')} 00000 n \n`;
          const first = `${table}trailer\n<< /Size 4 /Root 1 0 R /Prev ${end} >>\n`;
          const second = end + first.length;
          return `${first}${table}trailer\n<< /Size 4 /Root 1 0 R /Prev ${end} /XRefStm ${second} >>\nstartxref\n${second}\n%%EOF\n`;
        },
      });
      expectMerged(await mergeHostile(bytes));
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'more revisions than the reader reads is a 422 naming them',
    async () => {
      let text = buildPdf([CATALOG, PAGES, PAGE]).toString('latin1');
      const xrefAt = Number(/startxref\n(\d+)/.exec(text)![1]);
      text += `startxref\n${xrefAt}\n%%EOF\n`.repeat(1_100);
      expectRefused(await mergeHostile(Buffer.from(text, 'latin1')), /more than 1000 revisions/);
    },
    CASE_TIMEOUT_MS,
  );
});

describe('merge bounds: object streams', () => {
  it(
    'an object stream of ~1.5 MB inflating to 1.5 GB, holding an object the page uses, is read no further than the cap',
    async () => {
      const bytes = objectStreamBomb();
      expect(bytes.length).toBeGreaterThan(MiB);
      expect(bytes.length).toBeLessThan(2 * MiB);
      // The object in the bomb is past the reader's cap: left out, as a viewer would; the page merges.
      expectMerged(await mergeHostile(bytes));
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'the catalog inside an object stream that inflates beyond the cap: no catalog, 422',
    async () => {
      const body = Buffer.concat([Buffer.from(`1 0 ${CATALOG}`), Buffer.alloc(40 * MiB, 0x20)]);
      const z = zlib.deflateSync(body);
      const stm = Buffer.concat([
        Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`, 'latin1'),
        z,
        Buffer.from('\nendstream', 'latin1'),
      ]);
      const bytes = buildPdf(['<< /Type /Foo >>', PAGES, PAGE, stm], {
        tail: (o, end) => {
          const rows = Buffer.alloc(6 * 6);
          [
            [0, 0, 0],
            [2, 4, 0],
            [1, o[1]!, 0],
            [1, o[2]!, 0],
            [1, o[3]!, 0],
            [1, end, 0],
          ].forEach(([t, a, b], i) => {
            rows[i * 6] = t!;
            rows.writeUInt32BE(a!, i * 6 + 1);
            rows[i * 6 + 5] = b!;
          });
          return xrefStreamTail(5, '/Size 6 /W [1 4 1]', rows)(o, end);
        },
      });
      expectRefused(await mergeHostile(bytes), /catalog/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'an object stream that /Extends itself and holds an object claiming to live in it again',
    async () => {
      const inner = '5 0 6 15 << /A 5 0 R >> << /Type /ObjStm /Extends 4 0 R >>';
      const bytes = buildPdf([
        CATALOG,
        PAGES,
        PAGE.replace('>>', '/Loop 5 0 R >>'),
        `<< /Type /ObjStm /N 2 /First 9 /Extends 4 0 R /Length ${inner.length} >>\nstream\n${inner}\nendstream`,
      ]);
      expectMerged(await mergeHostile(bytes));
    },
    CASE_TIMEOUT_MS,
  );
});

describe('merge bounds: nesting and trees', () => {
  it(
    'an array nested 100,000 deep referenced from the page is left out; inside the catalog it is a 422',
    async () => {
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      expectMerged(await mergeHostile(buildPdf([CATALOG, PAGES, PAGE.replace('>>', '/Deep 4 0 R >>'), deep])));
      expectRefused(await mergeHostile(buildPdf([CATALOG.replace('>>', `/Deep ${deep} >>`), PAGES, PAGE])), /catalog/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'a page tree whose node lists itself is a 422 naming the loop',
    async () => {
      const bytes = buildPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>', PAGE]);
      expectRefused(await mergeHostile(bytes), /loop/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'a page tree that fans out to 10^12 visits through shared nodes is a 422',
    async () => {
      const kids = (n: number) => Array(1000).fill(`${n} 0 R`).join(' ');
      const bytes = buildPdf([
        CATALOG,
        `<< /Type /Pages /Kids [${kids(4)}] /Count 1 >>`,
        PAGE,
        `<< /Type /Pages /Kids [${kids(5)}] >>`,
        `<< /Type /Pages /Kids [${kids(6)}] >>`,
        `<< /Type /Pages /Kids [${kids(7)}] >>`,
        '<< /Type /Pages /Kids [3 0 R] >>',
      ]);
      // Counted by the bounded reader up to the merge's room, as the 10^12 leaves are all one page object.
      expectRefused(await mergeHostile(bytes), /pages beyond the 10000-page limit|page tree has more than/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    '%PDF followed by 20 MB of noise is a 422 without crawling the bytes',
    async () => {
      const noise = Buffer.alloc(20 * MiB + 9);
      noise.write('%PDF-1.7\n', 'latin1');
      let x = 0x12345678;
      for (let i = 9; i < noise.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        noise[i] = x & 0xff;
      }
      expectRefused(await mergeHostile(noise), /catalog/);
    },
    CASE_TIMEOUT_MS,
  );
});

const CORPUS = path.join(import.meta.dirname, '../fixtures/pdf-validation');
const corpusFiles = fs.readdirSync(CORPUS).filter((f) => f.endsWith('.pdf'));

/** A header with no version (`%PDF-X.Y`): merge's sniffing answers 400 INVALID_FILE_FORMAT, a clear 4xx too. */
const NOT_A_PDF = /minimal-illegal-header/;
/** Files pyHanko's tests say must be refused (README.md of the corpus): encrypted, or a cycle in the page tree. */
const MUST_REFUSE = /minimal-aes256|minimal-rc4|minimal-pubkey-aes256|malformed-encrypt-dict1|circular-page-tree/;

describe("merge bounds: pyHanko's reader test files", () => {
  it('each merges (its pages plus one) or is a 422 naming it; encrypted files and the circular page tree are 422s', async () => {
    const seen: string[] = [];
    for (const file of corpusFiles) {
      const outcome = await mergeHostile(new Uint8Array(fs.readFileSync(path.join(CORPUS, file))));
      if ('merged' in outcome) {
        expect(MUST_REFUSE.test(file), `${file} was merged`).toBe(false);
        expect(pdfinfoPages(outcome.merged.pdf), file).toBe(outcome.merged.pageCount);
        seen.push(`${file}: ${outcome.merged.pageCount} pages`);
      } else {
        expect(outcome.refused.status, `${file}: ${outcome.refused.message}`).toBe(NOT_A_PDF.test(file) ? 400 : 422);
        expect(outcome.refused.details?.[0]?.field).toBe('documents.0');
        seen.push(`${file}: ${outcome.refused.status} ${outcome.refused.message}`);
      }
    }
    expect(seen).toHaveLength(40);
    for (const file of corpusFiles.filter((f) => MUST_REFUSE.test(f))) expect(seen.find((s) => s.startsWith(file))).toMatch(/: 422 /);
  }, 120_000);
});
