/**
 * Every file of test/fixtures/pdf-attacks gets the verdict its README gives. pdfsig calls every manipulated
 * file "Signature is Valid"; these tests hold the verifier to the README's "expected (ours)" column.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyPdf, type VerifyResult } from '../../src/verify/index.js';
import { CORPUS, corpusFile } from './fixtures.js';

const noTrust = { trust: { anchors: [], service: [] } };
const verify = (rel: string): VerifyResult => verifyPdf(corpusFile(rel), noTrust);
const issues = (r: VerifyResult, i = 0) => r.signatures[i]!.modificationsAfter.details.map((d) => d.issue).join('\n');

describe('corpus coverage', () => {
  it('has a test below for each of the 24 files', () => {
    const files = fs.readdirSync(CORPUS, { recursive: true }).filter((f) => String(f).endsWith('.pdf'));
    expect(files).toHaveLength(24);
    const source = fs.readFileSync(path.join(import.meta.dirname, 'corpus.test.ts'), 'utf8');
    for (const f of files) expect(source, `no test names ${f}`).toContain(path.basename(String(f)));
  });
});

describe('pdf-insecurity-2019 (USF / ISA / SWA)', () => {
  it('isa-3.pdf: pages appended behind an empty xref without /Prev are seen; crypto ok, modified → invalid', () => {
    const r = verify('pdf-insecurity-2019/isa-3.pdf');
    expect(r.valid).toBe(false);
    expect(r.indication).toBe('TOTAL_FAILED');
    const s = r.signatures[0]!;
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.coverage).toBe('ENTIRE_REVISION');
    expect(s.modificationsAfter.level).toBe('OTHER');
    expect(issues(r)).toMatch(/page 33 added/);
    expect(issues(r)).toMatch(/XREF_REPAIRED/);
    expect(s.problems.join()).toMatch(/MODIFIED_AFTER_SIGNING/);
  });

  it('isaValidPdf.pdf: page content rewritten in a well-formed update → invalid', () => {
    const r = verify('pdf-insecurity-2019/isaValidPdf.pdf');
    expect(r.valid).toBe(false);
    const s = r.signatures[0]!;
    expect(s.subFilter).toBe('ETSI.CAdES.detached');
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.modificationsAfter.level).toBe('OTHER');
    expect(issues(r)).toMatch(/stream 5 of the signed revision was rewritten, but it is also used at object 4 \/Contents/);
  });

  it('siwa.pdf: gap larger than /Contents → UNCLEAR coverage, FORMAT_FAILURE', () => {
    const r = verify('pdf-insecurity-2019/siwa.pdf');
    expect(r.valid).toBe(false);
    const s = r.signatures.find((x) => x.byteRange[2] === 23028)!;
    expect(s.coverage).toBe('UNCLEAR');
    expect(s.indication).toBe('TOTAL_FAILED');
    expect(s.subIndication).toBe('FORMAT_FAILURE');
    expect(s.problems.join()).toMatch(/SIGNATURE_WRAPPING/);
    // The original dictionary's /ByteRange, moved into the signed tail, is reported too.
    expect(s.problems.join()).toMatch(/DUPLICATED_BYTE_RANGE: another \/ByteRange at offset 23029/);
  });
});

describe('shadow-2021', () => {
  for (const file of [
    'hide-v1-image_3-signed.pdf',
    'hide-v2-form-over-text_3-signed.pdf',
    'replace-v1-overlay_3-signed.pdf',
    'hide-and-replace-v1_3-signed.pdf',
  ]) {
    it(`${file}: crypto ok, untrusted, no modification`, () => {
      const r = verify(`shadow-2021/${file}`);
      expect(r.valid).toBe(true);
      expect(r.indication).toBe('INDETERMINATE');
      const s = r.signatures[0]!;
      expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
      expect(s.coverage).toBe('ENTIRE_FILE');
      expect(s.certificate.trusted).toBe(false);
      expect(s.subIndication).toBe('NO_CERTIFICATE_CHAIN_FOUND');
      expect(s.modificationsAfter.level).toBe('NONE');
    });
  }

  it('hide-v1-image_4-manipulated.pdf: object 8 mapped to a body declaring 6 0 obj → modified, mismatch flagged', () => {
    const r = verify('shadow-2021/hide-v1-image_4-manipulated.pdf');
    expect(r.valid).toBe(false);
    const d = r.signatures[0]!.modificationsAfter.details;
    expect(d.some((x) => x.object === 8 && x.kind === 're-pointed' && /declares itself 6 0 obj/.test(x.issue))).toBe(true);
    expect(d.some((x) => /XREF_NUMBER_MISMATCH/.test(x.issue))).toBe(true);
  });

  it('hide-v2-form-over-text_4-manipulated.pdf: widgets 15 and 18 emptied → modified', () => {
    const r = verify('shadow-2021/hide-v2-form-over-text_4-manipulated.pdf');
    expect(r.valid).toBe(false);
    const emptied = r.signatures[0]!.modificationsAfter.details.filter((x) => x.kind === 'emptied').map((x) => x.object);
    expect(emptied.sort((a, b) => Number(a) - Number(b))).toEqual([15, 18]);
  });

  it('replace-v1-overlay_4-manipulated.pdf: form fill after an approval signature → modified (FORM_FILL), invalid', () => {
    const r = verify('shadow-2021/replace-v1-overlay_4-manipulated.pdf');
    expect(r.valid).toBe(false);
    const s = r.signatures[0]!;
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.modificationsAfter.level).toBe('FORM_FILL');
    expect(s.problems.join()).toMatch(/MODIFIED_AFTER_SIGNING: FORM_FILL/);
  });

  it('hide-and-replace-v1_4-manipulated.pdf: xref-only update re-points object 13 to offset 1187 → modified', () => {
    const r = verify('shadow-2021/hide-and-replace-v1_4-manipulated.pdf');
    expect(r.valid).toBe(false);
    const d = r.signatures[0]!.modificationsAfter.details;
    expect(d.some((x) => x.object === 13 && x.kind === 're-pointed' && /1187/.test(x.issue))).toBe(true);
  });
});

describe('certification-2021 (DocMDP)', () => {
  it('02_Test_cert_p2_sign_original.pdf: certification P=2 then approval; both ok, SHA-1 flagged weak', () => {
    const r = verify('certification-2021/02_Test_cert_p2_sign_original.pdf');
    expect(r.valid).toBe(true);
    expect(r.signatures).toHaveLength(2);
    const [cert, approval] = r.signatures;
    expect(cert!.certifying).toBe(true);
    expect(cert!.docMdp).toMatchObject({ permission: 2, respected: true });
    expect(cert!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    for (const s of [cert!, approval!]) {
      expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
      expect(s.digestAlgorithm).toBe('SHA-1');
      expect(s.warnings.join()).toMatch(/WEAK_DIGEST_ALGORITHM/);
    }
  });

  it('03_Test_cert_p2_sign_manipulate.pdf: signature appearance with no signature behind it → invalid, unsigned field reported', () => {
    const r = verify('certification-2021/03_Test_cert_p2_sign_manipulate.pdf');
    expect(r.valid).toBe(false);
    const cert = r.signatures.find((s) => s.certifying)!;
    expect(cert.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(cert.modificationsAfter.details.some((d) => d.attack === 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE')).toBe(true);
    expect(cert.docMdp?.respected).toBe(false);
    expect(r.unsignedSignatureFields).toContainEqual({ fieldName: 'Signature4', hasAppearance: true });
  });

  it('02_NDA_cert_p2_sign_original.pdf: certified (P=2 + FieldMDP) then approval-signed → both ok', () => {
    const r = verify('certification-2021/02_NDA_cert_p2_sign_original.pdf');
    expect(r.valid).toBe(true);
    expect(r.signatures.map((s) => s.integrity.digestMatches && s.integrity.signatureValid)).toEqual([true, true]);
    const cert = r.signatures.find((s) => s.certifying)!;
    expect(cert.docMdp).toMatchObject({ permission: 2, respected: true });
    expect(r.unsignedSignatureFields.length).toBe(2);
  });

  it('03_NDA_cert_p2_sign_manipulate.pdf: unlinked approval signature is found as an orphan → not silently valid', () => {
    const r = verify('certification-2021/03_NDA_cert_p2_sign_manipulate.pdf');
    expect(r.valid).toBe(false);
    const orphan = r.signatures.find((s) => s.orphaned)!;
    expect(orphan).toBeDefined();
    expect(orphan.fieldName).toBeNull();
    expect(orphan.problems.join()).toMatch(/ORPHANED_SIGNATURE/);
    const cert = r.signatures.find((s) => s.certifying)!;
    expect(cert.integrity).toEqual({ digestMatches: true, signatureValid: true });
  });

  it('shadowed-certified-visible.pdf: certified P=3, no modification', () => {
    const r = verify('certification-2021/shadowed-certified-visible.pdf');
    expect(r.valid).toBe(true);
    const s = r.signatures[0]!;
    expect(s.certifying).toBe(true);
    expect(s.docMdp).toEqual({ permission: 3, respected: true });
    expect(s.modificationsAfter.level).toBe('NONE');
  });
});

describe('pyhanko-coverage', () => {
  it('coverage-base.pdf: reported as-is (a placeholder, not a positive fixture)', () => {
    const r = verify('pyhanko-coverage/coverage-base.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.problems.join()).toMatch(/CONTENTS_EMPTY/);
  });

  it('coverage-tail-uncovered.pdf: signed block does not end a revision → PARTIAL, invalid', () => {
    const r = verify('pyhanko-coverage/coverage-tail-uncovered.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('PARTIAL');
  });

  it('coverage-signature-gap-too-big.pdf: UNCLEAR (gap larger than /Contents)', () => {
    const r = verify('pyhanko-coverage/coverage-signature-gap-too-big.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('UNCLEAR');
    expect(r.signatures[0]!.problems.join()).toMatch(/SIGNATURE_WRAPPING/);
  });

  it('coverage-one-byterange.pdf: UNCLEAR (2 numbers)', () => {
    const r = verify('pyhanko-coverage/coverage-one-byterange.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('UNCLEAR');
    expect(r.signatures[0]!.problems.join()).toMatch(/BYTE_RANGE_MALFORMED/);
  });

  it('coverage-weird-byterange.pdf: UNCLEAR ([0 10 20 30])', () => {
    const r = verify('pyhanko-coverage/coverage-weird-byterange.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('UNCLEAR');
    expect(r.signatures[0]!.byteRange).toEqual([0, 10, 20, 30]);
  });

  it('form-update-override-appearance-stream.pdf: both valid, #1 extended with a signature only', () => {
    const r = verify('pyhanko-coverage/form-update-override-appearance-stream.pdf');
    expect(r.valid).toBe(true);
    expect(r.signatures.map((s) => s.valid)).toEqual([true, true]);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  it('form-update-override-appearance-stream-sneaky.pdf: #1 modified (shared stream clobbered), #2 ok', () => {
    const r = verify('pyhanko-coverage/form-update-override-appearance-stream-sneaky.pdf');
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
    expect(r.signatures[0]!.valid).toBe(false);
    expect(r.signatures[1]!.valid).toBe(true);
    // pyHanko: the stream's other path (.Root.FooBar) is not one the appearance rule checked.
    expect(issues(r)).toMatch(/stream 9 of the signed revision was rewritten, but it is also used at \/Root \/FooBar/);
  });

  it('minimal-two-fields-signed-twice.pdf: both valid, the first extended with a signature only', () => {
    const r = verify('pyhanko-coverage/minimal-two-fields-signed-twice.pdf');
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.coverage).toBe('ENTIRE_REVISION');
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.signatures[1]!.coverage).toBe('ENTIRE_FILE');
  });
});
