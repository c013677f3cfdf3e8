/**
 * Modification rules beyond the attack corpus (issue 16): metadata updates, changes reaching the document only
 * through the trailer, catalog /Extensions, form filling and appearances set through indirect objects, and
 * legitimate shapes that must not raise alarms (an inline signature dictionary, a signature field with
 * separate widget kids). Every file is built here from a signed base, as each scenario describes.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from '@cantoo/pdf-lib';
import { verifyPdf, openPdf, type VerifyResult } from '../../src/verify/index.js';
import { dictOf, isName, isRef, type PdfValue } from '../../src/pdf/index.js';
import { appendUpdate, makePdf, makePki, nextObjectNumber, serialize, signPdf, type TestPki } from './fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let base: Uint8Array;
let signed: Uint8Array;
let form: Uint8Array;

const verify = (b: Uint8Array): VerifyResult => verifyPdf(b, { trust });
const dict = (map: Map<string, PdfValue>): PdfValue => ({ kind: 'dict', map, start: 0, end: 0 });
const ref = (num: number): PdfValue => ({ kind: 'ref', num, gen: 0 });
const str = (text: string): PdfValue => ({ kind: 'string', bytes: Buffer.from(text, 'latin1'), hex: false, start: 0, end: 0 });
const stream = (content: string) => `<</Type /XObject /Subtype /Form /BBox [0 0 200 20] /Length ${content.length}>>\nstream\n${content}\nendstream`;

/** A one-page PDF with a text field "name" whose widget is a separate kid with an indirect /AP dictionary. */
async function makeForm(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const tf = doc.getForm().createTextField('name');
  tf.addToPage(page, { x: 50, y: 700, width: 200, height: 20 });
  const pdf = new Uint8Array(await doc.save({ useObjectStreams: false }));
  // Move the widget's /AP dictionary into an indirect object, as many producers write it.
  const d = openPdf(pdf);
  const widget = d.bodies.map((b) => ({ b, v: d.resolve(b.num, d.last)?.value })).find((x) => isName(dictOf(x.v)?.map.get('Subtype'), 'Widget'))!;
  const wmap = new Map((widget.v as { map: Map<string, PdfValue> }).map);
  const n = nextObjectNumber(pdf);
  const ap = wmap.get('AP')!;
  wmap.set('AP', ref(n));
  return appendUpdate(pdf, [
    { num: n, body: serialize(ap) },
    { num: widget.b.num, body: serialize(dict(wmap)) },
  ]);
}

/** The text field's objects at the last revision: field, widget and the widget's indirect /AP dictionary. */
function formObjects(pdf: Uint8Array) {
  const d = openPdf(pdf);
  const mapOf = (num: number) => new Map((d.resolve(num, d.last)!.value as { map: Map<string, PdfValue> }).map);
  for (const b of d.bodies) {
    const v = d.resolve(b.num, d.last)?.value;
    if (!v || typeof v !== 'object' || Array.isArray(v) || v.kind !== 'dict') continue;
    const sub = v.map.get('Subtype');
    const ap = v.map.get('AP');
    const parent = v.map.get('Parent');
    if (isName(sub, 'Widget') && isRef(ap) && isRef(parent)) {
      return {
        widget: { num: b.num, map: mapOf(b.num) },
        field: { num: parent.num, map: mapOf(parent.num) },
        ap: { num: ap.num, map: mapOf(ap.num) },
      };
    }
  }
  throw new Error('no widget with an indirect /AP');
}

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  base = await makePdf(1);
  signed = signPdf(base, { signer: pki.rsa });
  form = await makeForm();
}, 60_000);
afterAll(() => pki?.cleanup());

describe('metadata after signing (METADATA)', () => {
  it('a new /Info with another title and author in a later revision is METADATA and not valid', () => {
    const n = nextObjectNumber(signed);
    const b = appendUpdate(signed, [{ num: n, body: '<</Title (Another title) /Author (Mallory) /Producer (x)>>' }], { info: n });
    const r = verify(b);
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('METADATA');
    expect(r.signatures[0]!.modificationsAfter.details.some((d) => d.level === 'METADATA')).toBe(true);
  });

  it('an XMP /Metadata stream added to the catalog after signing is METADATA and not valid', () => {
    const d = openPdf(signed);
    const root = (d.trailerAt(d.last)!.map.get('Root') as { num: number }).num;
    const cat = new Map(d.catalogAt(d.last)!.map);
    const n = nextObjectNumber(signed);
    cat.set('Metadata', ref(n));
    const xmp =
      '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><dc:title>Other</dc:title></x:xmpmeta><?xpacket end="w"?>';
    const b = appendUpdate(signed, [
      { num: n, body: `<</Type /Metadata /Subtype /XML /Length ${xmp.length}>>\nstream\n${xmp}\nendstream` },
      { num: root, body: serialize(dict(cat)) },
    ]);
    const r = verify(b);
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('METADATA');
  });

  it('a signer bumping only /ModDate and /Producer of /Info is bookkeeping (SIGNATURES_ONLY), valid', () => {
    const n = nextObjectNumber(signed);
    const d = openPdf(signed);
    const info = d.dictAt(d.trailerAt(d.last)!.map.get('Info'), d.last);
    const map = new Map(info?.map ?? []);
    map.set('ModDate', str('D:20261124070000Z'));
    map.set('Producer', str('Some signer 1.0'));
    const r = verify(appendUpdate(signed, [{ num: n, body: serialize(dict(map)) }], { info: n }));
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.valid).toBe(true);
  });

  it('a pure further signature stays SIGNATURES_ONLY and valid', () => {
    const r = verify(signPdf(signed, { signer: pki.ec, fieldName: 'Signature2' }));
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });
});

describe('legitimate shapes', () => {
  it('a signature dictionary stored inline in the field /V is not a format failure', () => {
    const r = verify(signPdf(base, { signer: pki.rsa, inline: true }));
    expect(r.signatures[0]!.problems).toEqual([]);
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
  });

  it('an inline signature followed by a second signature keeps both valid', () => {
    const r = verify(signPdf(signPdf(base, { signer: pki.rsa, inline: true }), { signer: pki.ec, fieldName: 'Signature2', inline: true }));
    expect(r.signatureCount).toBe(2);
    expect(r.valid).toBe(true);
  });

  it('a signature field whose widget is a separate indirect kid is not an appearance without a signature', () => {
    const one = signPdf(base, { signer: pki.rsa, widgetKid: true, visible: true });
    const r = verify(one);
    expect(r.valid).toBe(true);
    expect(r.unsignedSignatureFields).toEqual([]);
    const two = verify(signPdf(one, { signer: pki.ec, fieldName: 'Signature2', widgetKid: true, visible: true }));
    expect(two.valid).toBe(true);
    expect(two.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(two.signatures[0]!.modificationsAfter.details.filter((d) => d.attack)).toEqual([]);
  });
});

/** Fills the text field: a new indirect appearance stream for /AP /N and the field's /V. */
function fillField(pdf: Uint8Array, value: string): Uint8Array {
  const { field, ap } = formObjects(pdf);
  const n = nextObjectNumber(pdf);
  field.map.set('V', str(value));
  ap.map.set('N', ref(n));
  const objs = [
    { num: n, body: stream(`/Tx BMC BT /Helv 12 Tf 2 5 Td (${value}) Tj ET EMC`) },
    { num: ap.num, body: serialize(dict(ap.map)) },
    { num: field.num, body: serialize(dict(field.map)) },
  ];
  return appendUpdate(pdf, objs);
}

/** The sneaky variant: only the indirect /AP dictionary changes, re-pointing /N at a new stream; no /V. */
function repointAppearance(pdf: Uint8Array): Uint8Array {
  const { ap } = formObjects(pdf);
  const n = nextObjectNumber(pdf);
  ap.map.set('N', ref(n));
  return appendUpdate(pdf, [
    { num: n, body: stream('q 1 0 0 rg BT /Helv 12 Tf 2 5 Td (PAID) Tj ET Q') },
    { num: ap.num, body: serialize(dict(ap.map)) },
  ]);
}

describe('form filling with indirect appearances', () => {
  it('a field filled after an approval signature (indirect /AP /N + /V) is FORM_FILL, not OTHER (valid only under a DocMDP that permits it)', () => {
    const r = verify(fillField(signPdf(form, { signer: pki.rsa }), 'Alice'));
    expect(r.signatures[0]!.modificationsAfter.level).toBe('FORM_FILL');
    // docs/api.md § Verify: without a certification only further signatures are permitted (as the corpus' replace-v1-overlay case).
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.problems.join()).toMatch(/MODIFIED_AFTER_SIGNING: FORM_FILL/);
  });

  it('a field filled after a P=2 certification is FORM_FILL and valid', () => {
    const r = verify(fillField(signPdf(form, { signer: pki.rsa, certify: 2 }), 'Alice'));
    expect(r.signatures[0]!.modificationsAfter.level).toBe('FORM_FILL');
    expect(r.valid).toBe(true);
  });

  it('the same fill after a P=1 certification is not valid', () => {
    const r = verify(fillField(signPdf(form, { signer: pki.rsa, certify: 1 }), 'Alice'));
    expect(r.valid).toBe(false);
  });

  for (const p of [1, 2] as const) {
    it(`re-pointing an existing widget's /AP /N through its indirect /AP dictionary after a P=${p} certification is caught`, () => {
      const r = verify(repointAppearance(signPdf(form, { signer: pki.rsa, certify: p })));
      expect(r.valid).toBe(false);
      expect(['ANNOTATIONS', 'OTHER']).toContain(r.signatures[0]!.modificationsAfter.level);
    });
  }

  it('the re-pointed appearance after an approval signature is not valid either', () => {
    const r = verify(repointAppearance(signPdf(form, { signer: pki.rsa })));
    expect(r.valid).toBe(false);
  });
});

describe('trailer and catalog', () => {
  it('a new /Root in the last trailer pointing at a different catalog is not valid', () => {
    const d = openPdf(signed);
    const cat = new Map(d.catalogAt(d.last)!.map);
    const n = nextObjectNumber(signed);
    const b = appendUpdate(signed, [{ num: n, body: serialize(dict(cat)) }]);
    // Re-point the last trailer's /Root at the copy.
    const text = Buffer.from(b).toString('latin1');
    const at = text.lastIndexOf('/Root ');
    const old = /\/Root (\d+) 0 R/.exec(text.slice(at))![0];
    const patched = text.slice(0, at) + text.slice(at).replace(old, `/Root ${n} 0 R`.padEnd(old.length, ' '));
    const r = verify(new Uint8Array(Buffer.from(patched, 'latin1')));
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });

  it('a changed or lowered catalog /Extensions entry is not valid; an added or raised developer extension is (iText)', () => {
    const d = openPdf(signed);
    const root = (d.trailerAt(d.last)!.map.get('Root') as { num: number }).num;
    const withExt = (ext: string) => {
      const cat = new Map(d.catalogAt(d.last)!.map);
      cat.delete('Extensions');
      return appendUpdate(signed, [{ num: root, body: serialize(dict(cat)).replace(/>>$/, ` /Extensions ${ext}>>`) }]);
    };
    const esic = withExt('<</ESIC <</BaseVersion /1.7 /ExtensionLevel 2>>>>');
    expect(verify(esic).valid).toBe(true);
    const other = withExt('<</XYZ <</BaseVersion /1.7 /ExtensionLevel 3 /OpenAction 1 0 R>>>>');
    expect(verify(other).valid).toBe(false);
    // Change an existing extension after a signature over the ESIC one.
    const signedEsic = signPdf(esic, { signer: pki.ec, fieldName: 'Signature2' });
    const d2 = openPdf(signedEsic);
    const cat2 = new Map(d2.catalogAt(d2.last)!.map);
    cat2.delete('Extensions');
    const withEsic = (esicEntry: string) =>
      appendUpdate(signedEsic, [{ num: root, body: serialize(dict(cat2)).replace(/>>$/, ` /Extensions <</ESIC ${esicEntry}>>>>`) }]);
    // Raising the extension level is what a later PAdES signer does (iText allows it; pyHanko allows any change).
    expect(verify(withEsic('<</BaseVersion /1.7 /ExtensionLevel 5>>')).valid).toBe(true);
    expect(verify(withEsic('<</BaseVersion /2.0 /ExtensionLevel 2>>')).valid).toBe(true);
    // Lowered, or changed beyond level and base version: OTHER.
    expect(verify(withEsic('<</BaseVersion /1.7 /ExtensionLevel 1>>')).signatures[1]!.modificationsAfter.level).toBe('OTHER');
    expect(verify(withEsic('<</BaseVersion /1.6 /ExtensionLevel 2>>')).signatures[1]!.modificationsAfter.level).toBe('OTHER');
    const changed = withEsic('<</BaseVersion /1.7 /ExtensionLevel 2 /URL (https://example.org/)>>');
    const r = verify(changed);
    expect(r.valid).toBe(false);
    expect(r.signatures[1]!.modificationsAfter.level).toBe('OTHER');
    // The first signature sees the same path (ESIC added, then changed), not just its endpoints.
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });
});

describe('validation data (DSS/VRI)', () => {
  const withDss = (extra: string) => {
    const d = openPdf(signed);
    const root = (d.trailerAt(d.last)!.map.get('Root') as { num: number }).num;
    const cat = new Map(d.catalogAt(d.last)!.map);
    let n = nextObjectNumber(signed);
    const dssNum = n++;
    const certNum = n++;
    const vriNum = n++;
    cat.set('DSS', ref(dssNum));
    const der = Buffer.from(pki.caPem.replace(/-----[^-]+-----|\s/g, ''), 'base64').toString('latin1');
    return appendUpdate(signed, [
      { num: certNum, body: `<</Length ${der.length}>>\nstream\n${der}\nendstream` },
      { num: vriNum, body: `<</Type /VRI /Cert [${certNum} 0 R]>>` },
      { num: dssNum, body: `<</Type /DSS /Certs [${certNum} 0 R] /VRI <</${'A'.repeat(40)} ${vriNum} 0 R>>${extra}>>` },
      { num: root, body: serialize(dict(cat)) },
    ]);
  };

  it('a DSS with certificates and a VRI entry added after signing is SIGNATURES_ONLY, valid', () => {
    const r = verify(withDss(''));
    expect(r.signatures[0]!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.valid).toBe(true);
  });

  it('a "DSS" carrying entries that are not validation data is OTHER, not valid', () => {
    const r = verify(withDss(' /OpenAction <</S /JavaScript /JS (app.alert(1))>>'));
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
    expect(r.valid).toBe(false);
  });
});
