/**
 * Modification rules beyond the attack corpus (issue 16): metadata updates, changes reaching the document only
 * through the trailer, catalog /Extensions, form filling and appearances set through indirect objects, and
 * legitimate shapes that must not raise alarms (an inline signature dictionary, a signature field with
 * separate widget kids). Every file is built here from a signed base, as each scenario describes.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf, openPdf, type VerifyResult } from '../../src/verify/index.js';
import type { PdfValue } from '../../src/pdf/index.js';
import { appendUpdate, makePdf, makePki, nextObjectNumber, serialize, signPdf, type TestPki } from './fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let base: Uint8Array;
let signed: Uint8Array;

const verify = (b: Uint8Array): VerifyResult => verifyPdf(b, { trust });
const dict = (map: Map<string, PdfValue>): PdfValue => ({ kind: 'dict', map, start: 0, end: 0 });
const ref = (num: number): PdfValue => ({ kind: 'ref', num, gen: 0 });
const str = (text: string): PdfValue => ({ kind: 'string', bytes: Buffer.from(text, 'latin1'), hex: false, start: 0, end: 0 });

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  base = await makePdf(1);
  signed = signPdf(base, { signer: pki.rsa });
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

  it('a changed catalog /Extensions entry is not valid; an added ESIC developer extension is', () => {
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
    const changed = appendUpdate(signedEsic, [
      { num: root, body: serialize(dict(cat2)).replace(/>>$/, ' /Extensions <</ESIC <</BaseVersion /1.7 /ExtensionLevel 5>>>>>>') },
    ]);
    const r = verify(changed);
    expect(r.valid).toBe(false);
    expect(r.signatures[1]!.modificationsAfter.level).toBe('OTHER');
  });
});
