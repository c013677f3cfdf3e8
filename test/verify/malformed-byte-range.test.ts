/**
 * A real signature whose /ByteRange is malformed is a signature, and it is not valid (issue 23): it used to
 * come back NO_SIGNATURE_FOUND when the array held something the PDF reader refuses (`1.5e3`: PDF numbers have
 * no exponent), so the whole object did not parse. Built from a PDF signed by Folio's own signer and from a
 * pyHanko-signed file of the shared corpus, each edited in place (same length, every other offset unchanged).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity } from '../../src/sign/index.js';
import { loadTrustStore, verifyPdf, type TrustStore } from '../../src/verify/index.js';
import { MAX_SALVAGED_PER_DOCUMENT } from '../../src/verify/salvage.js';
import { signMinimal } from '../sign/helpers.js';
import { makePdf } from './fixtures.js';

const PYHANKO = path.join(import.meta.dirname, '../fixtures/pdf-validation/pyhanko--pades-with-old-style-signing-cert-attr.pdf');

let tmp: string;
let identity: SigningIdentity;
let trust: TrustStore;
let folioSigned: Uint8Array;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-br-'));
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: tmp }), pino({ level: 'silent' }));
  trust = loadTrustStore({ rootCertificatePem: identity.rootCertificatePem, certificatePem: identity.certificatePem });
  folioSigned = (await signMinimal(identity, await makePdf(1))).pdf;
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * Rewrites the last /ByteRange array in place: the array and the spaces after it (Folio pads there) are
 * replaced by the new text padded to the same length, so every other offset stays where it was.
 */
function rewriteByteRange(pdf: Uint8Array, make: (br: number[]) => string): Uint8Array {
  const text = Buffer.from(pdf).toString('latin1');
  const at = text.lastIndexOf('/ByteRange');
  const m = /^\/ByteRange\s*\[([^\]]*)\] */.exec(text.slice(at))!;
  const open = at + m[0].indexOf('[');
  const span = at + m[0].length - open;
  const replacement = make(m[1]!.trim().split(/\s+/).map(Number));
  if (replacement.length > span) throw new Error('replacement ByteRange too long');
  const out = Buffer.from(pdf);
  out.write(replacement.padEnd(span, ' '), open, 'latin1');
  return new Uint8Array(out);
}

/** The malformed forms, each from the original four values. */
const FORMS: Array<[string, (b: number[]) => string, RegExp]> = [
  ['an exponent (1.5e3)', ([a, , c, d]) => `[${a} 1.5e3 ${c} ${d}]`, /found \[0 1\.5e3 \d+ \d+\] \("1\.5e3" is not a PDF number\)/],
  ['an upper-case exponent (2E2)', ([a, , c, d]) => `[${a} 2E2 ${c} ${d}]`, /"2E2" is not a PDF number/],
  ['a real number', ([a, b, c, d]) => `[${a} ${b}.5 ${c} ${d}]`, /found \[0 \d+\.5 \d+ \d+\]$/],
  ['a negative number', ([a, b, c, d]) => `[${a} -${b} ${c} ${d}]`, /found \[0 -\d+ \d+ \d+\]$/],
  ['a missing entry', ([a, b, c]) => `[${a} ${b} ${c}]`, /found \[0 \d+ \d+\]$/],
  ['no entries', () => `[]`, /found \[\]$/],
  ['a name among the numbers', ([a, , c, d]) => `[${a} /Xx ${c} ${d}]`, /found \[0 \/Xx \d+ \d+\]$/],
];

function expectMalformedSignature(bytes: Uint8Array, problem: RegExp, fieldName: string | null) {
  const r = verifyPdf(bytes, { trust });
  expect(r.indication).toBe('TOTAL_FAILED');
  expect(r.valid).toBe(false);
  expect(r.signatureCount).toBe(1);
  const s = r.signatures[0]!;
  expect(s.fieldName).toBe(fieldName);
  expect(s.indication).toBe('TOTAL_FAILED');
  expect(s.subIndication).toBe('FORMAT_FAILURE');
  expect(s.coverage).toBe('UNCLEAR');
  expect(s.integrity.digestMatches).toBe(false);
  // Found through its field, not as an orphan, and not mistaken for a planted second /ByteRange.
  expect(s.problems.join('\n')).not.toMatch(/ORPHANED_SIGNATURE|DUPLICATED_BYTE_RANGE/);
  const malformed = s.problems.find((p) => p.startsWith('BYTE_RANGE_MALFORMED'));
  expect(malformed, s.problems.join('\n')).toMatch(problem);
  expect(r.reason).toContain('BYTE_RANGE_MALFORMED');
  return s;
}

describe('verify: a signature with a malformed /ByteRange', () => {
  it("Folio's own signature is valid before the edit (the baseline the cases below break)", () => {
    const r = verifyPdf(folioSigned, { trust });
    expect(r).toMatchObject({ valid: true, indication: 'TOTAL_PASSED', signatureCount: 1 });
  });

  for (const [name, make, problem] of FORMS) {
    it(`Folio-signed, ${name}: one signature, TOTAL_FAILED, BYTE_RANGE_MALFORMED naming it`, () => {
      const s = expectMalformedSignature(rewriteByteRange(folioSigned, make), problem, 'Folio-Signature-1');
      // The CMS is still read: the signing certificate is named even though nothing could be hashed.
      expect(s.signer?.subject).toMatch(/CN=Folio Document Signing/);
    });
  }

  it('the exponent form reports no byteRange positions it cannot read; the readable forms report theirs', () => {
    const exp = verifyPdf(rewriteByteRange(folioSigned, FORMS[0]![1]), { trust });
    expect(exp.signatures[0]!.byteRange).toEqual([]);
    const neg = verifyPdf(rewriteByteRange(folioSigned, FORMS[3]![1]), { trust });
    expect(neg.signatures[0]!.byteRange).toHaveLength(4);
    expect(neg.signatures[0]!.byteRange[1]).toBeLessThan(0);
  });

  it('a pyHanko-signed file (shared corpus) edited to 1.5e3: its signature is reported, invalid', () => {
    if (!fs.existsSync(PYHANKO)) {
      console.warn(`skipped: ${PYHANKO} is not present`);
      return;
    }
    const original = new Uint8Array(fs.readFileSync(PYHANKO));
    expect(verifyPdf(original, { trust }).signatureCount).toBe(1);
    const s = expectMalformedSignature(rewriteByteRange(original, FORMS[0]![1]), /"1\.5e3" is not a PDF number/, 'Sig1');
    expect(s.signer?.name).toBe('Alice');
    for (const [, make, problem] of FORMS.slice(1)) expectMalformedSignature(rewriteByteRange(original, make), problem, 'Sig1');
  });

  it('thousands of broken /ByteRange objects are re-read a bounded number of times', () => {
    const object = (i: number, end: string) => `${900_000 + i} 0 obj\n<< /Type /Sig /ByteRange [0 1e3 2 3] /Contents <00> >>\n${end}`;
    for (const end of ['endobj\n', '']) {
      const junk = Array.from({ length: 5000 }, (_, i) => object(i, end)).join('');
      const bytes = new Uint8Array(Buffer.concat([Buffer.from(folioSigned), Buffer.from(`\n${junk}`, 'latin1')]));
      const started = performance.now();
      const r = verifyPdf(bytes, { trust });
      expect(r.valid).toBe(false);
      // Folio's own signature and at most MAX_SALVAGED_PER_DOCUMENT re-read objects (none without endobj).
      expect(r.signatureCount).toBe(end ? 1 + MAX_SALVAGED_PER_DOCUMENT : 1);
      // Generous: a search to the end of the file for each of 5,000 objects would be quadratic.
      expect(performance.now() - started).toBeLessThan(20_000);
    }
  }, 60_000);

  it('a signature dictionary found only by scanning (its field unlinked) is still reported when its /ByteRange does not parse', () => {
    const text = Buffer.from(rewriteByteRange(folioSigned, FORMS[0]![1])).toString('latin1');
    // Unlink: the field's /V now names an object that does not exist (same length).
    const v = /\/V (\d+) 0 R/.exec(text)!;
    const unlinked = text.slice(0, v.index) + `/V ${'9'.repeat(v[1]!.length)} 0 R` + text.slice(v.index + v[0].length);
    const r = verifyPdf(new Uint8Array(Buffer.from(unlinked, 'latin1')), { trust });
    expect(r.indication).toBe('TOTAL_FAILED');
    expect(r.signatureCount).toBe(1);
    const problems = r.signatures[0]!.problems.join('\n');
    expect(problems).toMatch(/BYTE_RANGE_MALFORMED: .*"1\.5e3" is not a PDF number/);
    expect(problems).toMatch(/ORPHANED_SIGNATURE/);
  });
});
