/**
 * Attacks built from well-signed files: ours (an independent CMS signer in fixtures.ts, RSA/ECDSA/PSS) and
 * poppler's `pdfsig -add-signature`. Every manipulated file must end valid:false with the right finding;
 * the benign cases (a second signature, pdfsig output with its root in the anchors) must stay valid:true.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf, type VerifyResult } from '../../src/verify/index.js';
import {
  addAnnotation,
  addSneakySignatureField,
  appendGarbageObject,
  appendPage,
  changeContentStream,
  emptyContents,
  nullContents,
  renameLastKey,
  repointObject,
  rewriteByteRange,
  widenGap,
  zeroContents,
} from './attacks.js';
import {
  appendUpdate,
  makePdf,
  makePki,
  nextObjectNumber,
  pdfsigReport,
  pdfsigSign,
  serialize,
  signPdf,
  patchLast,
  type TestPki,
} from './fixtures.js';
import { openPdf } from '../../src/verify/index.js';
import type { PdfRef, PdfValue } from '../../src/pdf/index.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let base: Uint8Array;
let signed: Uint8Array;
let certifiedP2: Uint8Array;
let certifiedP3: Uint8Array;

const verify = (b: Uint8Array): VerifyResult => verifyPdf(b, { trust });
const allProblems = (r: VerifyResult) => r.signatures.flatMap((s) => s.problems).join('\n');

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  base = await makePdf(2);
  signed = signPdf(base, { signer: pki.rsa });
  certifiedP2 = signPdf(base, { signer: pki.rsa, certify: 2, visible: true });
  certifiedP3 = signPdf(base, { signer: pki.rsa, certify: 3 });
}, 60_000);
afterAll(() => pki?.cleanup());

describe('well-signed files', () => {
  it('RSA PKCS#1 v1.5 / SHA-256, PAdES: TOTAL_PASSED, trusted through TRUST_ANCHORS', () => {
    const r = verify(signed);
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
    const s = r.signatures[0]!;
    expect(s.coverage).toBe('ENTIRE_FILE');
    expect(s.subFilter).toBe('ETSI.CAdES.detached');
    expect(s.digestAlgorithm).toBe('SHA-256');
    expect(s.certificate).toEqual({ chainValid: true, trusted: true, validAtSigningTime: true });
    expect(s.signer).toMatchObject({ name: 'Alice Signer', email: 'alice@example.com' });
    expect(r.signer).toMatchObject({ name: 'Alice Signer', email: 'alice@example.com' });
    expect(s.issuedByThisService).toBe(false);
  });

  it('ECDSA P-256 / SHA-384 and RSA-PSS / SHA-512 verify', () => {
    for (const b of [signPdf(base, { signer: pki.ec, digest: 'sha384' }), signPdf(base, { signer: pki.rsa, pss: true, digest: 'sha512' })]) {
      const r = verify(b);
      expect(r.valid).toBe(true);
      expect(r.indication).toBe('TOTAL_PASSED');
    }
  });

  it('a BER-encoded CMS (indefinite outer length, as some signers write) verifies', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, berOuter: true }));
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
  });

  it('a signer certificate allowing only key encipherment: intact, but INDETERMINATE / CHAIN_CONSTRAINTS_FAILURE', () => {
    const r = verify(signPdf(base, { signer: pki.encipherOnly }));
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.subIndication).toBe('CHAIN_CONSTRAINTS_FAILURE');
    expect(r.signatures[0]!.warnings.join()).toMatch(/KEY_USAGE/);
  });

  it('SHA-1 is accepted but flagged weak (INDETERMINATE / CRYPTO_CONSTRAINTS_FAILURE)', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, digest: 'sha1' }));
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.subIndication).toBe('CRYPTO_CONSTRAINTS_FAILURE');
    expect(r.signatures[0]!.warnings.join()).toMatch(/SHA-1/);
  });

  it('a self-signed stranger: intact and valid, but untrusted → INDETERMINATE', () => {
    const r = verify(signPdf(base, { signer: pki.stranger }));
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('INDETERMINATE');
    expect(r.signatures[0]!.certificate.trusted).toBe(false);
    expect(r.signatures[0]!.subIndication).toBe('NO_CERTIFICATE_CHAIN_FOUND');
  });

  it('the service identity is recognised: issuedByThisService', () => {
    const r = verifyPdf(signed, { trust: { anchors: [new X509Certificate(pki.caPem)], service: [new X509Certificate(pki.caPem)] } });
    expect(r.signatures[0]!.issuedByThisService).toBe(true);
    expect(verify(signPdf(base, { signer: pki.stranger })).signatures[0]!.issuedByThisService).toBe(false);
  });

  it('an unsigned PDF: NO_SIGNATURE_FOUND, not valid', () => {
    const r = verify(base);
    expect(r).toMatchObject({ valid: false, indication: 'NO_SIGNATURE_FOUND', signatureCount: 0 });
  });

  it('an unsigned PDF whose signature field only draws a signature appearance says so', () => {
    const r = verify(addSneakySignatureField(base));
    expect(r).toMatchObject({ valid: false, indication: 'NO_SIGNATURE_FOUND' });
    expect(r.unsignedSignatureFields).toContainEqual({ fieldName: 'CEO', hasAppearance: true });
    expect(r.reason).toMatch(/draw a signature appearance/);
  });
});

describe('RFC 3161 signature timestamps', () => {
  it('a token over the signature value verifies; trust follows the TSA certificate', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, timestampBy: pki.tsa }));
    const s = r.signatures[0]!;
    expect(s.timestamp).toMatchObject({ valid: true, trusted: true });
    expect(Math.abs(Date.parse(s.timestamp!.time) - Date.now())).toBeLessThan(5 * 60_000);
    expect(s.indication).toBe('TOTAL_PASSED');
  });

  it('a token from an untrusted TSA verifies but is untrusted', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, timestampBy: pki.strangerTsa }));
    expect(r.signatures[0]!.timestamp).toMatchObject({ valid: true, trusted: false });
  });

  it('a token signed by a certificate without the timeStamping EKU is invalid', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, timestampBy: pki.ec }));
    expect(r.signatures[0]!.timestamp?.valid).toBe(false);
    expect(r.signatures[0]!.warnings.join()).toMatch(/timeStamping extended key usage/);
  });

  it('a token imprinting another signature value (transplanted) is invalid and degrades the indication', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, timestampBy: pki.tsa, timestampWrongImprint: true }));
    const s = r.signatures[0]!;
    expect(s.timestamp?.valid).toBe(false);
    expect(s.warnings.join()).toMatch(/TIMESTAMP_INVALID/);
    expect(s.indication).toBe('INDETERMINATE');
    expect(s.subIndication).toBe('SIG_CONSTRAINTS_FAILURE');
  });
});

describe('document timestamps (ETSI.RFC3161)', () => {
  it('a document timestamp after a signature: both valid, the signature extended with signatures only', () => {
    const r = verify(signPdf(signed, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'DocTS' }));
    expect(r.valid).toBe(true);
    const ts = r.signatures[1]!;
    expect(ts.subFilter).toBe('ETSI.RFC3161');
    expect(ts.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(ts.coverage).toBe('ENTIRE_FILE');
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  it('a document timestamp over altered bytes → HASH_FAILURE', () => {
    const stamped = signPdf(signed, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'DocTS' });
    const r = verify(patchLast(stamped, '/Type /DocTimeStamp', '/Type /DocTimeStamq'));
    expect(r.valid).toBe(false);
    expect(r.signatures.find((s) => s.subFilter === 'ETSI.RFC3161')!.subIndication).toBe('HASH_FAILURE');
  });
});

describe('benign later changes stay valid', () => {
  it('a second signature added later: the first is extended with signatures only', () => {
    const r = verify(signPdf(signed, { signer: pki.ec, fieldName: 'Second' }));
    expect(r.valid).toBe(true);
    expect(r.signatureCount).toBe(2);
    expect(r.signatures[0]!.coverage).toBe('ENTIRE_REVISION');
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.signatures[1]!.coverage).toBe('ENTIRE_FILE');
    expect(r.signer?.name).toBe('Bob Signer');
  });

  it('a PDF signed by pdfsig -add-signature with its root in TRUST_ANCHORS: valid and trusted', () => {
    const p = pdfsigSign(pki, base);
    expect(pdfsigReport(pki, p)).toMatch(/Signature is Valid/);
    const r = verify(p);
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
    expect(r.signatures[0]!.fieldName).toBe('PopplerSig');
    expect(r.signatures[0]!.subFilter).toBe('adbe.pkcs7.detached');
  });

  it('pdfsig adding a second signature (its widget is not in the AcroForm) keeps both valid', () => {
    const r = verify(pdfsigSign(pki, signed));
    expect(r.valid).toBe(true);
    expect(r.signatures.map((s) => s.fieldName)).toEqual(['Signature1', 'PopplerSig']);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  it('a certified document (P=2) signed again by an approval signature stays valid', () => {
    const r = verify(signPdf(certifiedP2, { signer: pki.ec, fieldName: 'Approval' }));
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.docMdp).toEqual({ permission: 2, respected: true });
  });

  it('a Link annotation on a P=3 certified document is permitted', () => {
    const r = verify(addAnnotation(certifiedP3, 'Link'));
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('ANNOTATIONS');
  });
});

describe('incremental saving attacks (ISA)', () => {
  it('a page appended after signing → invalid (OTHER)', () => {
    const r = verify(appendPage(signed));
    expect(r.valid).toBe(false);
    expect(r.indication).toBe('TOTAL_FAILED');
    expect(r.signatures[0]!.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(r.signatures[0]!.coverage).toBe('ENTIRE_REVISION');
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });

  it('a content stream changed after signing → invalid', () => {
    const r = verify(changeContentStream(signed));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.details.some((d) => d.kind === 'changed' && d.level === 'OTHER')).toBe(true);
  });

  it('the update hidden behind an empty xref without /Prev is still seen', () => {
    const r = verify(changeContentStream(signed, { xref: 'empty', prev: false }));
    expect(r.valid).toBe(false);
    const issues = r.signatures[0]!.modificationsAfter.details.map((d) => d.issue).join('\n');
    expect(issues).toMatch(/XREF_REPAIRED/);
    // The page's content stream, rewritten: its use by the page is no path a rule checks.
    expect(issues).toMatch(/stream \d+ of the signed revision was rewritten, but it is also used at object \d+ \/Contents/);
  });

  it('an update without /Prev is flagged', () => {
    const r = verify(appendPage(signed, { prev: false }));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.details.some((d) => /NO_PREV/.test(d.issue))).toBe(true);
  });

  it('an object body appended with no xref and no %%EOF → invalid', () => {
    const r = verify(appendGarbageObject(signed));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('ENTIRE_REVISION');
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });
});

describe('shadow attacks', () => {
  it('an xref-only update re-pointing an object to another body → invalid', () => {
    const r = verify(repointObject(signed));
    expect(r.valid).toBe(false);
    expect(r.signatures.length).toBeGreaterThan(0);
    expect(allProblems(r)).toMatch(/MODIFIED_AFTER_SIGNING|ORPHANED_SIGNATURE/);
  });
});

describe('universal signature forgery (USF)', () => {
  const cases: Array<[string, (b: Uint8Array) => Uint8Array, RegExp]> = [
    ['/Contents zeroed', zeroContents, /CONTENTS_EMPTY/],
    ['/Contents empty', emptyContents, /BYTE_RANGE_GAP_MISMATCH|CONTENTS_EMPTY/],
    ['/Contents null', nullContents, /CONTENTS_NULL/],
    ['/Contents missing', (b) => renameLastKey(b, '/Contents'), /CONTENTS_MISSING/],
    ['/ByteRange missing', (b) => renameLastKey(b, '/ByteRange'), /BYTE_RANGE_MISSING/],
    ['/ByteRange with 3 numbers', (b) => rewriteByteRange(b, ([a, bb, c]) => `[${a} ${bb} ${c}]`), /BYTE_RANGE_MALFORMED/],
    ['/ByteRange with a negative number', (b) => rewriteByteRange(b, ([a, bb, c, d]) => `[${a} ${bb} ${c} -${d}]`), /BYTE_RANGE_MALFORMED/],
    ['/ByteRange [0 0 0 0]', (b) => rewriteByteRange(b, () => '[0 0 0 0]'), /BYTE_RANGE|SIGNATURE_DICTIONARY_NOT_SIGNED/],
    ['/ByteRange pointing past the end', (b) => rewriteByteRange(b, ([a, bb, c, d]) => `[${a} ${bb} ${c} ${d! + 100000}]`), /BYTE_RANGE_PAST_END/],
    ['/ByteRange not starting at 0', (b) => rewriteByteRange(b, ([, bb, c, d]) => `[5 ${bb! - 5} ${c} ${d}]`), /BYTE_RANGE_NOT_FROM_START/],
  ];
  for (const [name, attack, problem] of cases) {
    it(`${name} → TOTAL_FAILED / FORMAT_FAILURE`, () => {
      const r = verify(attack(signed));
      expect(r.valid).toBe(false);
      expect(r.indication).toBe('TOTAL_FAILED');
      expect(r.signatures[0]!.subIndication).toBe('FORMAT_FAILURE');
      expect(allProblems(r)).toMatch(problem);
    });
  }

  it('a duplicated /ByteRange key in the signature dictionary is refused', () => {
    const r = verify(patchLast(signed, '/Filter /Adobe.PPKLite', '/ByteRange [0 1 2 3]  '));
    expect(r.valid).toBe(false);
    expect(allProblems(r)).toMatch(/DUPLICATE_KEYS: .*ByteRange/);
  });

  it('one flipped byte inside the signed range → HASH_FAILURE', () => {
    const r = verify(patchLast(signed, '006F006C0069006F002D', '006F006C0069006F002E'));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.subIndication).toBe('HASH_FAILURE');
    expect(r.signatures[0]!.integrity.digestMatches).toBe(false);
  });
});

describe('content changes disguised as permitted ones', () => {
  function firstContent(pdf: Uint8Array) {
    const doc = openPdf(pdf);
    const cat = doc.catalogAt(doc.last)!;
    const pages = doc.dictAt(cat.map.get('Pages'), doc.last)!;
    const pageRef = (doc.deref(pages.map.get('Kids'), doc.last) as PdfValue[])[0] as PdfRef;
    const page = doc.dictAt(pageRef, doc.last)!;
    let c = page.map.get('Contents');
    if (Array.isArray(c)) c = c[0];
    return { page, pageNum: pageRef.num, contentNum: (c as { num: number }).num };
  }
  const stream = (extra: string, data = 'BT /F1 30 Tf 72 600 Td (Pay 1,000,000) Tj ET') =>
    `<<${extra} /Length ${data.length}>>\nstream\n${data}\nendstream`;

  it('a content stream rewritten with /ByteRange and /Contents keys (posing as a signature dictionary)', () => {
    const { contentNum } = firstContent(signed);
    const r = verify(appendUpdate(signed, [{ num: contentNum, body: stream(' /Type /Sig /ByteRange [0 1 2 3] /Contents <00>') }]));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });

  it('a page dictionary changed and given a /ByteRange key', () => {
    const { page, pageNum } = firstContent(signed);
    const n = nextObjectNumber(signed);
    const map = new Map(page.map);
    map.set('Contents', { kind: 'ref', num: n, gen: 0 });
    map.set('ByteRange', [0, 1, 2, 3]);
    const r = verify(
      appendUpdate(signed, [
        { num: n, body: stream('') },
        { num: pageNum, body: serialize({ kind: 'dict', map, start: 0, end: 0 }) },
      ]),
    );
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.details.some((d) => /looks like a signature dictionary but is used by/.test(d.issue))).toBe(true);
  });

  it('a content stream posing as a Link annotation on a P=3 certified document', () => {
    const { contentNum } = firstContent(certifiedP3);
    const r = verify(appendUpdate(certifiedP3, [{ num: contentNum, body: stream(' /Type /Annot /Subtype /Link /Rect [0 0 10 10]') }]));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.docMdp?.respected).toBe(false);
  });

  it('the trailer /Info re-pointed at a rewritten content stream', () => {
    const { contentNum } = firstContent(signed);
    const r = verify(appendUpdate(signed, [{ num: contentNum, body: stream('') }], { info: contentNum }));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });
});

describe('signature wrapping (SWA)', () => {
  it('a gap widened past /Contents → UNCLEAR, SIGNATURE_WRAPPING', () => {
    const r = verify(widenGap(signed));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.coverage).toBe('UNCLEAR');
    expect(allProblems(r)).toMatch(/SIGNATURE_WRAPPING/);
  });
});

describe('certification attacks (EAA / SSA)', () => {
  it('evil annotation: a visible FreeText added after a P=3 certification → invalid despite P=3', () => {
    const r = verify(addAnnotation(certifiedP3, 'FreeText'));
    expect(r.valid).toBe(false);
    const s = r.signatures[0]!;
    expect(s.modificationsAfter.level).toBe('ANNOTATIONS');
    expect(s.modificationsAfter.details.some((d) => d.attack === 'EVIL_ANNOTATION')).toBe(true);
    expect(s.docMdp).toEqual({ permission: 3, respected: false });
  });

  it('a Stamp annotation after a P=2 certification → invalid (annotations not permitted)', () => {
    const r = verify(addAnnotation(certifiedP2, 'Stamp'));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.docMdp?.respected).toBe(false);
  });

  it('sneaky signature: a new signature field showing a signature with none behind it → invalid', () => {
    const r = verify(addSneakySignatureField(certifiedP2));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.details.some((d) => d.attack === 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE')).toBe(true);
    expect(r.unsignedSignatureFields).toContainEqual({ fieldName: 'CEO', hasAppearance: true });
  });

  it('a P=1 certification forbids even a later signature', () => {
    const r = verify(signPdf(signPdf(base, { signer: pki.rsa, certify: 1 }), { signer: pki.ec, fieldName: 'Late' }));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.docMdp).toEqual({ permission: 1, respected: false });
  });
});
