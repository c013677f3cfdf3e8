/**
 * pyHanko's reader test files (test/fixtures/pdf-validation, its README says what a careful reader does with
 * each) through every door by which Folio opens a caller's PDF: verify's reader (openPdf), sign's opening
 * (the sniff, then preparePdf: openForAuthoring with sign's page-tree check; then the last page's size that
 * sealing reads), mergePdfs, and previews (the page sizes the PDF core reads, then poppler). Each answer is the one the
 * table names — success, or a FolioError 400/422 — never another error, and within a bounded time.
 *
 * Where the table departs from pyHanko's verdict, the capability has no use for what pyHanko refuses: a loop in
 * the page tree stops sign and merge (they walk every page) but not verify (which reads signatures) or a
 * preview of page 1 (poppler walks the tree with its own loop check); an encrypted file's page tree is not
 * encrypted, so previews read its sizes and leave decryption to poppler (a password → 422, see
 * test/preview/input-bounds.test.ts). Previews of three files whose cross-reference stream the PDF core reads
 * but poppler cannot find (startxref off by one or more: "Couldn't read xref table") are poppler's clear 422.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { isPdf } from '../../src/formats/sniff.js';
import { mergePdfs } from '../../src/merge/engine.js';
import { openPdf } from '../../src/pdf/index.js';
import { pageSizes, renderPdfPages } from '../../src/preview/index.js';
import { preparePdf } from '../../src/sign/sign-pdf.js';
import { verifyPdf } from '../../src/verify/index.js';

const DIR = path.join(import.meta.dirname, '../fixtures/pdf-validation');
/** Generous for a loaded machine; the files are 1–28 KB and each answer takes milliseconds. */
const MAX_MS_PER_CALL = 10_000;

type Outcome = 'ok' | 400 | 422;
interface Row {
  verify: Outcome;
  sign: Outcome;
  merge: Outcome;
  /** The page sizes read by the PDF core before poppler. */
  sizes: Outcome;
  /** The whole preview of page 1 (a route sniffs first: not a PDF → 400). */
  preview: Outcome;
}

const OK: Row = { verify: 'ok', sign: 'ok', merge: 'ok', sizes: 'ok', preview: 'ok' };
const ENCRYPTED: Row = { verify: 422, sign: 422, merge: 422, sizes: 'ok', preview: 422 };
/** The page tree sits in a broken object stream: no page can be found. */
const NO_PAGE_TREE: Row = { verify: 'ok', sign: 422, merge: 422, sizes: 'ok', preview: 422 };
const POPPLER_LOSES_XREF: Row = { ...OK, preview: 422 };

/** The README's reader table, row by row (every file not named here is read: OK). */
const TABLE: Record<string, Row> = {
  'broken-objstream1': NO_PAGE_TREE,
  'broken-objstream2': NO_PAGE_TREE,
  'broken-objstream3': { ...OK, preview: 422 },
  'broken-objstream6': NO_PAGE_TREE,
  'circular-page-tree': { ...OK, sign: 422, merge: 422 },
  'minimal-aes256': ENCRYPTED,
  'minimal-rc4': ENCRYPTED,
  'minimal-pubkey-aes256': ENCRYPTED,
  'malformed-encrypt-dict1': ENCRYPTED,
  // `%PDF-X.Y`: no version, so no PDF by src/formats/sniff.ts, for every capability alike.
  'minimal-illegal-header': { verify: 400, sign: 400, merge: 400, sizes: 'ok', preview: 400 },
  // Sign appends to the input: the direct page would need an object of its own written too (see
  // AuthoringLimits.numberDirectPages), so pdf-lib's refusal stands, a 422; merge writes a new document.
  'page-tree-direct-kid': { ...OK, sign: 422 },
  'minimal-startxref-obo4': POPPLER_LOSES_XREF,
  'minimal-startxref-obo5': POPPLER_LOSES_XREF,
  'minimal-startxref-obo6': POPPLER_LOSES_XREF,
};

const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.pdf'));
const stem = (file: string) => file.replace(/^pyhanko--/, '').replace(/\.pdf$/, '');

/** The outcome of one call: 'ok', or the status of the FolioError it threw; anything else fails the test. */
async function outcome(what: string, call: () => unknown): Promise<{ outcome: Outcome; message?: string }> {
  const t0 = performance.now();
  try {
    await call();
    return { outcome: 'ok' };
  } catch (e) {
    if (!(e instanceof FolioError)) throw new Error(`${what}: not a FolioError: ${(e as Error)?.stack ?? String(e)}`);
    expect([400, 422], `${what}: ${e.code} ${e.message}`).toContain(e.status);
    return { outcome: e.status as 400 | 422, message: `${e.code} ${e.message}` };
  } finally {
    expect(performance.now() - t0, `${what} took too long`).toBeLessThan(MAX_MS_PER_CALL);
  }
}

const notAPdf = () => {
  throw new FolioError('INVALID_FILE_FORMAT', 'not a PDF');
};

/** Each door as its capability calls it. */
const DOORS: Record<keyof Row, (pdf: Uint8Array, file: string) => unknown> = {
  verify: (pdf) => openPdf(pdf),
  sign: async (pdf) => {
    // signDocument sniffs first (src/formats/sniff.ts), then prepares.
    if (!isPdf(pdf)) notAPdf();
    const { doc } = await preparePdf(pdf);
    // What sealing reads of the input: the last page's size (a page without /MediaBox made it a 500).
    const size = doc.getPage(doc.getPageCount() - 1).getSize();
    expect(size.width * size.height).toBeGreaterThan(0);
  },
  merge: async (pdf, file) => {
    const merged = await mergePdfs([{ pdf, fileName: file }], { outline: true, pageLabels: true });
    expect(merged.pageCount).toBeGreaterThan(0);
  },
  sizes: (pdf) => pageSizes(pdf, [1]),
  preview: (pdf) => (isPdf(pdf) ? renderPdfPages(pdf, 'png', { width: 100, pages: [1] }) : notAPdf()),
};

describe("pyHanko's reader files through every door Folio opens PDFs by", () => {
  it('the fixtures are the 40 files of the README, unchanged', () => {
    const sums = fs
      .readFileSync(path.join(DIR, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/)[1] ?? '');
    expect(files.sort()).toEqual(sums.sort());
    expect(files).toHaveLength(40);
    for (const name of Object.keys(TABLE)) expect(files, name).toContain(`pyhanko--${name}.pdf`);
  });

  it.each(files.map((f) => [stem(f), f]))('%s', async (name, file) => {
    const pdf = new Uint8Array(fs.readFileSync(path.join(DIR, file)));
    const want = TABLE[name] ?? OK;
    const got: Partial<Record<keyof Row, Outcome>> = {};
    const messages: string[] = [];
    for (const door of Object.keys(DOORS) as Array<keyof Row>) {
      const r = await outcome(`${name} through ${door}`, () => DOORS[door](pdf, file));
      got[door] = r.outcome;
      if (r.message) messages.push(`${door}: ${r.message}`);
    }
    expect(got, messages.join('\n')).toEqual(want);
  });
});

/**
 * The signed files of the README: what `POST /v1/verify` must say (its engine, verifyPdf; the same answers over
 * HTTP in pdf-validation-http.test.ts). pyHanko's verdict for each is FORM_FILLING (a second signing revision),
 * which Folio calls SIGNATURES_ONLY: signing writes the signature, its field and appearance, the catalog's
 * /Extensions and /Version and an XMP packet (the reference-path rules, src/verify/rules/paths.ts).
 */
describe("the README's signed files through verify", () => {
  const SIGNED: Array<[file: string, pyHanko: string, signatures: number, level: string]> = [
    ['extensions-indirect', 'test_diff_analysis_add_extensions_dict: FORM_FILLING', 2, 'SIGNATURES_ONLY'],
    ['extensions-update-direct', 'test_diff_analysis_add_extensions_dict: FORM_FILLING', 2, 'SIGNATURES_ONLY'],
    ['form-update-no-override-appearance-stream-ap-indirect', 'test_appearance_update_edge_cases: FORM_FILLING', 2, 'SIGNATURES_ONLY'],
    ['pades-with-old-style-signing-cert-attr', 'test_old_style_signing_cert_attr_ok: valid, intact', 1, 'NONE'],
  ];
  it.each(SIGNED)('%s (pyHanko %s) → valid, the first signature not modified beyond signing', (name, _pyHanko, count, level) => {
    const r = verifyPdf(new Uint8Array(fs.readFileSync(path.join(DIR, `pyhanko--${name}.pdf`))), { trust: { anchors: [], service: [] } });
    expect(r.valid, r.reason).toBe(true);
    expect(r.signatures).toHaveLength(count);
    for (const s of r.signatures) {
      expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
      expect(['ENTIRE_FILE', 'ENTIRE_REVISION']).toContain(s.coverage);
      expect(s.problems).toEqual([]);
    }
    expect(r.signatures[0]!.modificationsAfter.level).toBe(level);
    // Untrusted test roots: INDETERMINATE, never a failure.
    expect(r.indication).toBe('INDETERMINATE');
  });
});
