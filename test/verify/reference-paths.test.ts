/**
 * Difference analysis with pyHanko's semantics (src/verify/usages.ts, rules/paths.ts and the rules beside it):
 * every object a later revision defines is explained by a rule, and a rewrite of an object the signed revision
 * had only along the reference paths the rule checked. Each rule has a positive and a negative case: on files
 * other software wrote where the corpus has them (pyHanko's test files in test/fixtures/pdf-validation and
 * pdf-attacks), and otherwise on files built to the construction of the pyHanko test named in each case
 * (pyhanko-scenarios.ts), with the verdict that test asserts. Verdicts are per signature, in file order:
 * `ok` (valid) or the modification level that made it invalid.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRef, openPdf } from '../../src/pdf/index.js';
import { verifyPdf, type VerifyResult } from '../../src/verify/index.js';
import { appendUpdate, corpusFile, fillSignature, makePki, nextObjectNumber, signPdf, type TestPki } from './fixtures.js';
import { certDer, makeCrl, rootOf, signatureContents } from './ltv-fixtures.js';
import * as S from './pyhanko-scenarios.js';

const VALIDATION = path.join(import.meta.dirname, '../fixtures/pdf-validation');
const validationFile = (name: string) => new Uint8Array(fs.readFileSync(path.join(VALIDATION, `pyhanko--${name}.pdf`)));
const noTrust = { trust: { anchors: [], service: [] } };
const verify = (pdf: Uint8Array): VerifyResult => verifyPdf(pdf, noTrust);
/** Per signature: `ok`, or the modification level (or `invalid`) of a signature that is not valid. */
const verdicts = (r: VerifyResult) =>
  r.signatures.map((s) => (s.valid ? 'ok' : s.modificationsAfter.level === 'NONE' ? 'invalid' : s.modificationsAfter.level));
const issues = (r: VerifyResult) => r.signatures.flatMap((s) => s.modificationsAfter.details.map((d) => d.issue)).join('\n');

let pki: TestPki;
beforeAll(() => {
  pki = makePki();
}, 60_000);
afterAll(() => pki?.cleanup());

describe('files other software wrote (pyHanko, Adobe Reader): positive, and a negative appended to the same file', () => {
  it('extensions-indirect.pdf: a signing revision adds /Version, an indirect /Extensions and XMP → valid (pyHanko: FORM_FILLING)', () => {
    const r = verify(validationFile('extensions-indirect'));
    expect(verdicts(r)).toEqual(['ok', 'ok']);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  it('extensions-update-direct.pdf: a direct /Extensions filled in by the signing revision → valid', () => {
    expect(verdicts(verify(validationFile('extensions-update-direct')))).toEqual(['ok', 'ok']);
  });

  it('the same files with /Extensions removed afterwards → OTHER for both signatures (iText and pyHanko refuse it)', () => {
    for (const name of ['extensions-indirect', 'extensions-update-direct']) {
      const pdf = validationFile(name);
      const r = verify(appendUpdate(pdf, [{ num: 1, body: S.catalogWith(pdf, { Extensions: undefined }) }]));
      expect(verdicts(r), name).toEqual(['OTHER', 'OTHER']);
      expect(issues(r)).toMatch(/catalog entry \/Extensions removed/);
    }
  });

  it('the same file with the ISO_ developer extension lowered afterwards → OTHER (iText: level decreased)', () => {
    const pdf = validationFile('extensions-update-direct');
    const lowered = '<</ISO_ [<</Type /DeveloperExtensions /BaseVersion /2.0 /ExtensionLevel 32001>>]>>';
    expect(verdicts(verify(appendUpdate(pdf, [{ num: 1, body: S.catalogWith(pdf, { Extensions: lowered }) }])))).toEqual(['OTHER', 'OTHER']);
  });

  it('form-update-no-override-appearance-stream-ap-indirect.pdf: a signing revision replaces an indirect /AP → valid', () => {
    const r = verify(validationFile('form-update-no-override-appearance-stream-ap-indirect'));
    expect(verdicts(r)).toEqual(['ok', 'ok']);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  it('form-update-override-appearance-stream.pdf (Adobe-style reuse of the empty field’s stream) → valid; -sneaky.pdf → OTHER', () => {
    expect(verdicts(verify(corpusFile('pyhanko-coverage/form-update-override-appearance-stream.pdf')))).toEqual(['ok', 'ok']);
    const r = verify(corpusFile('pyhanko-coverage/form-update-override-appearance-stream-sneaky.pdf'));
    expect(verdicts(r)).toEqual(['OTHER', 'ok']);
    expect(issues(r)).toMatch(/stream 9 of the signed revision was rewritten, but it is also used at \/Root \/FooBar/);
  });

  it('an appearance stream of an already signed field rewritten in place afterwards → OTHER', () => {
    // Sig1's appearance (object 7) in form-update-override-appearance-stream.pdf, rewritten after both signatures.
    const pdf = corpusFile('pyhanko-coverage/form-update-override-appearance-stream.pdf');
    const r = verify(appendUpdate(pdf, [{ num: 7, body: S.stream('/Type /XObject /Subtype /Form /BBox [0 0 280 60]', '0 0 1 rg 0 0 280 60 re f') }]));
    expect(verdicts(r)).toEqual(['OTHER', 'OTHER']);
    expect(issues(r)).toMatch(/stream 7 of the signed revision was rewritten, but it is also used at object 6 \/AP \/N/);
  });

  it('minimal-two-fields-signed-twice.pdf (Adobe Reader: object streams, XMP) stays valid', () => {
    expect(verdicts(verify(corpusFile('pyhanko-coverage/minimal-two-fields-signed-twice.pdf')))).toEqual(['ok', 'ok']);
  });
});

describe("pyHanko's test_diff_analysis scenarios, built to each test's construction", () => {
  const table: Array<[test: string, build: () => Uint8Array, want: string[], message?: RegExp]> = [
    // test_appearance_update_edge_cases
    ['form-update-override-appearance-stream', () => S.overrideApStream(pki.rsa), ['ok', 'ok']],
    ['form-update-override-appearance-stream-ap-indirect', () => S.overrideApStreamApIndirect(pki.rsa), ['ok', 'ok']],
    ['form-update-no-override-appearance-stream-ap-indirect', () => S.noOverrideApIndirect(pki.rsa), ['ok', 'ok']],
    ['form-update-original-ap-type-wrong', () => S.originalApTypeWrong(pki.rsa), ['ok', 'ok']],
    // test_disallow_appearance_stream_override_if_clobbers
    ['form-update-override-appearance-stream-sneaky', () => S.overrideApStream(pki.rsa, true), ['OTHER', 'ok'], /also used at \/Root \/FooBar/],
    [
      'form-update-override-appearance-stream-ap-indirect-sneaky (the stream)',
      () => S.overrideApStreamApIndirect(pki.rsa, 'stream'),
      ['OTHER', 'ok'],
      /stream 9 of the signed revision was rewritten, but it is also used at \/Root \/FooBar/,
    ],
    [
      'form-update-override-appearance-stream-ap-indirect-sneaky (the /AP dictionary)',
      () => S.overrideApStreamApIndirect(pki.rsa, 'ap-dict'),
      ['OTHER', 'ok'],
      /appearance dictionary 10 of object 8 is also used at \/Root \/FooBar/,
    ],
    [
      'form-update-no-override-appearance-stream-ap-indirect-sneaky',
      () => S.noOverrideApIndirect(pki.rsa, true),
      ['OTHER', 'ok'],
      /appearance dictionary 10 of object 8 is also used at \/Root \/FooBar/,
    ],
    ['form-update-ap-indirect-sneaky-trailer', () => S.apIndirectSneakyTrailer(pki.rsa), ['OTHER', 'ok'], /also used at trailer \/FooBar/],
    [
      'an appearance stream shared with another annotation, rewritten by a signing revision',
      () => S.overrideApStreamSharedWithAnnotation(pki.rsa),
      ['OTHER', 'ok'],
      /stream 9 of the signed revision was rewritten, but it is also used at object 12 \/AP \/N/,
    ],
    // test_diff_analysis_add_extensions_dict
    ['extensions-direct', () => S.extensionsUpdate(pki.rsa, { start: 'none', write: 'direct' }), ['ok', 'ok']],
    ['extensions-indirect', () => S.extensionsUpdate(pki.rsa, { start: 'none', write: 'indirect' }), ['ok', 'ok']],
    ['extensions-update-direct', () => S.extensionsUpdate(pki.rsa, { start: 'direct', write: 'direct' }), ['ok', 'ok']],
    ['extensions-update-indirect', () => S.extensionsUpdate(pki.rsa, { start: 'indirect', write: 'indirect' }), ['ok', 'ok']],
    // test_diff_analysis_update_indirect_extensions_not_all_paths
    [
      'extensions-indirect-not-all-paths',
      () => S.extensionsUpdate(pki.rsa, { start: 'indirect', write: 'indirect', alsoAt: 'DontOverrideMe' }),
      ['OTHER', 'ok'],
      /object 12 of the signed revision was rewritten, but it is also used at \/Root \/DontOverrideMe/,
    ],
    // test_validate_separate_annot_with_indir_kids
    ['separate-annots-kids-indir', () => S.separateAnnotsIndirectKids(pki.rsa), ['ok', 'ok']],
    // test_double_sig_fill_deep_field_post_sign / test_double_sig_create_deep_field_post_sign
    ['fill a deep signature field (NewSigs.NewSig1)', () => S.deepSignatureField(pki.rsa, true), ['ok', 'ok']],
    [
      'create a deep signature field (NewSigs.NewSig2) in an existing field’s indirect /Kids',
      () => S.deepSignatureField(pki.rsa, false),
      ['OTHER', 'ok'],
      /object 13 of the signed revision was rewritten, but it is also used at object 12 \/Kids/,
    ],
  ];
  it.each(table.map(([name, build, want, message]) => ({ name, build, want, message })))('$name → $want', ({ build, want, message }) => {
    const r = verify(build());
    expect(verdicts(r), issues(r)).toEqual(want);
    if (message) expect(issues(r)).toMatch(message);
  });
});

describe('long-term validation updates (DSS, document timestamps) at every DocMDP level', () => {
  const ltvData = (pdf: Uint8Array): S.LtvData => {
    const crl = makeCrl(rootOf(pki));
    return {
      certs: [certDer(pki.caPem), certDer(pki.rsa.certPem)],
      crls: [crl],
      vri: signatureContents(pdf).map((signatureCms) => ({ signatureCms, certs: [certDer(pki.rsa.certPem)], crls: [crl] })),
    };
  };
  const docTimestamp = (pdf: Uint8Array) => signPdf(pdf, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'DocTS' });
  const vriKey = (cms: Uint8Array) => crypto.createHash('sha1').update(cms).digest('hex').toUpperCase();
  const refsOf = (pdf: Uint8Array, num: number) => {
    const d = openPdf(pdf);
    const v = d.resolve(num, d.last)!.value;
    return Array.isArray(v) ? v.filter(isRef).map((r) => `${r.num} 0 R`) : [];
  };
  const entriesOf = (pdf: Uint8Array, num: number) => {
    const d = openPdf(pdf);
    const v = d.dictAt({ kind: 'ref', num, gen: 0 }, d.last)!;
    return [...v.map].map(([k, r]) => `/${k} ${isRef(r) ? `${r.num} 0 R` : '<<>>'}`);
  };

  /** pades-lta-dss-indirect-arrs-test.pdf: Sig1, a DSS whose arrays, /VRI and VRI entries are indirect, a document timestamp. */
  let indirect: ReturnType<typeof S.dssUpdate>;
  let lta: Uint8Array;
  /** test_pades_sign_twice_indirect_arrs: then Sig2 and its validation data written into the same indirect objects. */
  let twice: Uint8Array;
  let sig2Entry: string;
  beforeAll(() => {
    const base = S.minimalSignedOnce(pki.rsa);
    indirect = S.dssUpdate(base, ltvData(base), { indirect: true });
    lta = docTimestamp(indirect.pdf);
    const signed2 = signPdf(lta, { signer: pki.ec, fieldName: 'Sig2' });
    const n = nextObjectNumber(signed2);
    sig2Entry = `/${vriKey(signatureContents(signed2).at(-1)!)} ${n + 1} 0 R`;
    twice = appendUpdate(signed2, [
      { num: n, body: new Uint8Array(S.derStream(certDer(pki.ec.certPem))) },
      { num: indirect.certs!, body: `[${[...refsOf(signed2, indirect.certs!), `${n} 0 R`].join(' ')}]` },
      { num: n + 1, body: `<</Type /VRI /Cert [${n} 0 R]>>` },
      { num: indirect.vri!, body: `<<${[...entriesOf(signed2, indirect.vri!), sig2Entry].join(' ')}>>` },
    ]);
  });

  it('a DSS with indirect /Certs, /CRLs, /VRI and VRI entries, then a document timestamp → valid (all ltaUpdate)', () => {
    const r = verify(lta);
    expect(verdicts(r)).toEqual(['ok', 'ok']);
    expect(r.signatures[0]!.modificationsAfter.details.every((d) => d.ltaUpdate || d.level === 'NONE')).toBe(true);
  });

  it('test_pades_sign_update_dss / sign_twice_indirect_arrs: the indirect arrays and /VRI extended in place → valid', () => {
    const n = nextObjectNumber(lta);
    const extended = appendUpdate(lta, [
      { num: n, body: new Uint8Array(S.derStream(certDer(pki.ec.certPem))) },
      { num: indirect.certs!, body: `[${[...refsOf(lta, indirect.certs!), `${n} 0 R`].join(' ')}]` },
    ]);
    expect(verdicts(verify(extended))).toEqual(['ok', 'ok']);
    expect(verdicts(verify(twice))).toEqual(['ok', 'ok', 'ok']);
  });

  it('test_pades_vri_allow_ts_addition: a VRI entry with /TS (direct, or an indirect stream) → valid', () => {
    const key = `/${'DEADBEEF'.repeat(5)}`;
    const direct = appendUpdate(twice, [{ num: indirect.vri!, body: `<<${[...entriesOf(twice, indirect.vri!), `${key} <</TS ()>>`].join(' ')}>>` }]);
    expect(verdicts(verify(direct))).toEqual(['ok', 'ok', 'ok']);
    const m = nextObjectNumber(twice);
    const viaStream = appendUpdate(twice, [
      { num: m, body: '<</Length 2>>\nstream\n\x05\x00\nendstream' },
      { num: indirect.vri!, body: `<<${[...entriesOf(twice, indirect.vri!), `${key} <</TS ${m} 0 R>>`].join(' ')}>>` },
    ]);
    expect(verdicts(verify(viaStream))).toEqual(['ok', 'ok', 'ok']);
  });

  it('test_pades_double_sign_delete_dss / _delete_vri / _delete_entry_in_vri: what a later signature covers may not go', () => {
    const dss = (extra: string) => `<</Type /DSS /Certs ${indirect.certs} 0 R /CRLs ${indirect.crls} 0 R${extra}>>`;
    // Sig1 signed before the DSS existed; the document timestamp and Sig2 cover it.
    const noDss = verify(appendUpdate(twice, [{ num: 1, body: S.catalogWith(twice, { DSS: undefined }) }]));
    expect(verdicts(noDss)).toEqual(['ok', 'OTHER', 'OTHER']);
    expect(issues(noDss)).toMatch(/the DSS of the signed revision was removed/);
    const noVri = verify(appendUpdate(twice, [{ num: indirect.dss, body: dss('') }]));
    expect(verdicts(noVri)).toEqual(['ok', 'OTHER', 'OTHER']);
    expect(issues(noVri)).toMatch(/the DSS \/VRI of the signed revision was removed/);
    const noEntry = verify(appendUpdate(twice, [{ num: indirect.vri!, body: `<<${sig2Entry}>>` }]));
    expect(verdicts(noEntry)).toEqual(['ok', 'OTHER', 'OTHER']);
    expect(issues(noEntry)).toMatch(/the VRI entry \/[0-9A-F]{40} of the signed revision was removed/);
  });

  it('test_pades_dss_object_clobber: the DSS written over an object of the signed revision → OTHER', () => {
    const base = fillSignature(
      S.pdfOf({
        1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R>>',
        2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
        3: '<</Type /Page /Parent 2 0 R /Annots [6 0 R]>>',
        5: '<</Fields [6 0 R] /SigFlags 3>>',
        6: '<</FT /Sig /T (Sig1) /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R /V 11 0 R>>',
        11: S.sigPlaceholder(),
        12: '(Hi there)',
      }),
      { signer: pki.rsa },
    );
    const r = verify(
      appendUpdate(base, [
        { num: 12, body: '<</Type /DSS /Certs []>>' },
        { num: 1, body: S.catalogWith(base, { DSS: '12 0 R' }) },
      ]),
    );
    expect(verdicts(r)).toEqual(['OTHER']);
    expect(issues(r)).toMatch(/object 12, a string in the signed revision, was reused as a dict/);
  });

  it('a DSS array written over an array of the signed revision that /Root /FooBar also uses → OTHER (safe_whitelist)', () => {
    // Object 7 of the signed revision: an empty array named /Root /FooBar.
    const signed = fillSignature(
      S.pdfOf({
        1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /FooBar 7 0 R>>',
        2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
        3: '<</Type /Page /Parent 2 0 R /Annots [6 0 R]>>',
        5: '<</Fields [6 0 R] /SigFlags 3>>',
        6: '<</FT /Sig /T (Sig1) /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R /V 11 0 R>>',
        7: '[]',
        11: S.sigPlaceholder(),
      }),
      { signer: pki.rsa },
    );
    const k = nextObjectNumber(signed);
    const r = verify(
      appendUpdate(signed, [
        { num: k, body: new Uint8Array(S.derStream(certDer(pki.caPem))) },
        { num: 7, body: `[${k} 0 R]` },
        { num: k + 1, body: '<</Type /DSS /Certs 7 0 R>>' },
        { num: 1, body: S.catalogWith(signed, { DSS: `${k + 1} 0 R` }) },
      ]),
    );
    expect(verdicts(r)).toEqual(['OTHER']);
    expect(issues(r)).toMatch(/validation data 7 of the signed revision was rewritten, but it is also used at \/Root \/FooBar/);
  });

  it('test_pades_dss_object_typing_tamper: each bogus DSS value → OTHER', () => {
    const base = S.minimalSignedOnce(pki.rsa);
    const bogus = [
      '(Hi there)',
      '<</Blah null>>',
      '<</Certs null>>',
      '<</VRI null>>',
      '<</VRI <</Bleh null>>>>',
      `<</VRI <</${'A'.repeat(40)} null>>>>`,
      `<</VRI <</${'A'.repeat(40)} <</Bleh null>>>>>>`,
      `<</VRI <</${'A'.repeat(40)} <</OCSP null>>>>>>`,
    ];
    for (const value of bogus) {
      const m = nextObjectNumber(base);
      const r = verify(
        appendUpdate(base, [
          { num: m, body: value },
          { num: 1, body: S.catalogWith(base, { DSS: `${m} 0 R` }) },
        ]),
      );
      expect(verdicts(r), value).toEqual(['OTHER']);
    }
  });

  it.each([1, 2, 3] as const)(
    'a P=%i certification, then a DSS (and /Extensions) in an object stream with an xref stream, then a document timestamp → valid',
    (p) => {
      const certified = S.minimalCertified(pki.rsa, p);
      const withDss = S.dssUpdate(certified, ltvData(certified), { indirect: true, extensions: true, objectStreams: true }).pdf;
      expect(openPdf(withDss).revisions.at(-1)!.xref).toBe('stream');
      const r = verify(withDss);
      expect(verdicts(r)).toEqual(['ok']);
      expect(r.signatures[0]!.docMdp).toEqual({ permission: p, respected: true });
      expect(verdicts(verify(docTimestamp(withDss)))).toEqual(['ok', 'ok']);
    },
  );

  it('a P=1 certification, then a DSS update that also rewrites page content → OTHER', () => {
    const certified = S.minimalCertified(pki.rsa, 1);
    const tampered = S.dssUpdate(certified, ltvData(certified), {
      objectStreams: true,
      extra: [{ num: 4, body: S.stream('', 'BT /F1 18 Tf 0 0 Td (Changed) Tj ET') }],
    }).pdf;
    expect(verdicts(verify(tampered))).toEqual(['OTHER']);
  });

  describe('a linearized signed file followed by an LTV update', () => {
    let dir: string;
    let linearized: Uint8Array;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-linearized-'));
      // An existing ADBE developer extension (what Acrobat writes), raised by the LTV update.
      const plain = S.pdfOf({
        1: '<</Type /Catalog /Pages 2 0 R /Extensions <</ADBE <</BaseVersion /1.7 /ExtensionLevel 3>>>>>>',
        2: '<</Type /Pages /Kids [3 0 R 5 0 R] /Count 2 /MediaBox [0 0 300 144]>>',
        3: '<</Type /Page /Parent 2 0 R /Contents 4 0 R>>',
        4: S.stream('', 'BT /F1 18 Tf 0 0 Td (Page one) Tj ET'),
        5: '<</Type /Page /Parent 2 0 R /Contents 4 0 R>>',
      });
      fs.writeFileSync(path.join(dir, 'ext.pdf'), plain);
      execFileSync('qpdf', ['--linearize', path.join(dir, 'ext.pdf'), path.join(dir, 'out.pdf')]);
      linearized = new Uint8Array(fs.readFileSync(path.join(dir, 'out.pdf')));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('DSS + /Extensions (ADBE raised, ESIC added), classic or object streams, then a document timestamp → valid', () => {
      expect(Buffer.from(linearized).toString('latin1')).toMatch(/\/Linearized/);
      const signed = signPdf(linearized, { signer: pki.rsa, fieldName: 'Sig1' });
      expect(verdicts(verify(signed))).toEqual(['ok']);
      const ext = '<</ADBE <</BaseVersion /1.7 /ExtensionLevel 5>> /ESIC <</BaseVersion /1.7 /ExtensionLevel 1>>>>';
      const dss = S.dssUpdate(signed, ltvData(signed), {}).pdf;
      const ltv = appendUpdate(dss, [{ num: openPdf(dss).catalogRefAt(openPdf(dss).last)!.num, body: S.catalogWith(dss, { Extensions: ext }) }]);
      expect(verdicts(verify(ltv))).toEqual(['ok']);
      expect(verdicts(verify(docTimestamp(ltv)))).toEqual(['ok', 'ok']);
      const compressed = S.dssUpdate(signed, ltvData(signed), { extensions: ext, indirect: true, objectStreams: true }).pdf;
      expect(verdicts(verify(compressed))).toEqual(['ok']);
    });

    it('the same LTV update dropping the ADBE extension → OTHER', () => {
      const signed = signPdf(linearized, { signer: pki.rsa, fieldName: 'Sig1' });
      const dss = S.dssUpdate(signed, ltvData(signed), {}).pdf;
      const root = openPdf(dss).catalogRefAt(openPdf(dss).last)!.num;
      const dropped = appendUpdate(dss, [
        { num: root, body: S.catalogWith(dss, { Extensions: '<</ESIC <</BaseVersion /1.7 /ExtensionLevel 1>>>>' }) },
      ]);
      expect(verdicts(verify(dropped))).toEqual(['OTHER']);
    });
  });
});

describe('bounds', () => {
  it('an appearance stream shared by 5,000 annotations, overwritten by a signing revision: OTHER, answered quickly', () => {
    const objects: Record<number, string> = {
      1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R>>',
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      5: '<</Fields [6 0 R 8 0 R] /SigFlags 3>>',
      6: '<</FT /Sig /T (Sig1) /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R /V 11 0 R>>',
      8: '<</FT /Sig /T (Sig2) /Type /Annot /Subtype /Widget /F 132 /Rect [10 74 290 134] /P 3 0 R /AP <</N 9 0 R>>>>',
      9: S.stream('/Type /XObject /Subtype /Form /BBox [0 0 280 60]', 'q Q'),
      11: S.sigPlaceholder(),
    };
    const annots: string[] = ['6 0 R', '8 0 R'];
    for (let i = 0; i < 5000; i++) {
      objects[100 + i] = `<</Type /Annot /Subtype /Square /Rect [0 0 1 1] /P 3 0 R /AP <</N 9 0 R>>>>`;
      annots.push(`${100 + i} 0 R`);
    }
    objects[3] = `<</Type /Page /Parent 2 0 R /Annots [${annots.join(' ')}]>>`;
    const base = fillSignature(S.pdfOf(objects), { signer: pki.rsa });
    const signed = S.signedUpdate(
      base,
      [
        { num: 8, body: '<</FT /Sig /T (Sig2) /Type /Annot /Subtype /Widget /F 132 /Rect [10 74 290 134] /P 3 0 R /AP <</N 9 0 R>> /V 15 0 R>>' },
        { num: 9, body: S.stream('/Type /XObject /Subtype /Form /BBox [0 0 280 60]', '0 0 1 rg 0 0 280 60 re f') },
        { num: 15, body: S.sigPlaceholder() },
      ],
      pki.rsa,
    );
    const t0 = performance.now();
    const r = verify(signed);
    // Generous for a loaded machine: ~0.2 s here (each use read once; it was quadratic in the annotations: 1.9 s).
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(verdicts(r)).toEqual(['OTHER', 'ok']);
    expect(issues(r)).toMatch(/stream 9 of the signed revision was rewritten, but it is also used at object \d+ \/AP \/N/);
  });
});
