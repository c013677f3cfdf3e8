/**
 * The difference-analysis scenarios of pyHanko's test suite (pkgs/pyhanko/tests/test_diff_analysis.py), built to
 * the construction each named test describes — its writer calls, object for object — for those whose PDF is not
 * in the corpus. pyHanko's own sample files are hand-written minimal PDFs (MINIMAL_TWO_FIELDS and friends:
 * a catalog, one page, an /AcroForm with signature fields merged with their widgets); `pdfOf` writes such a
 * file, `signedUpdate` appends an incremental update holding a signature placeholder and fills it with the
 * fixtures' independent signer. Object numbers follow pyHanko's sample files where the test names them.
 *
 * Each builder returns the final bytes; the verdict pyHanko's test asserts is in test/verify/reference-paths.test.ts.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { isRef, openPdf } from '../../src/pdf/index.js';
import { appendUpdate, fillSignature, nextObjectNumber, serialize, type Signer, type UpdateObject } from './fixtures.js';

/** A signature dictionary whose /ByteRange and /Contents the fixtures' signer fills (fillSignature). */
export function sigPlaceholder(opts: { subFilter?: string; type?: 'Sig' | 'DocTimeStamp'; reference?: string } = {}): string {
  return (
    `<</Type /${opts.type ?? 'Sig'} /Filter /Adobe.PPKLite /SubFilter /${opts.subFilter ?? 'ETSI.CAdES.detached'} ` +
    `/ByteRange [0 0000000000 0000000000 0000000000] /Contents <${'0'.repeat(16384)}>${opts.reference ?? ''} /M (D:20201101000000Z)>>`
  );
}

export const stream = (dict: string, data: string) => `<<${dict} /Length ${Buffer.byteLength(data, 'latin1')}>>\nstream\n${data}\nendstream`;
const BLANK_AP = stream('/Type /XObject /Subtype /Form /BBox [0 0 280 60] /Resources <<>>', 'q 0.95 0.95 0.95 rg 0 0 280 60 re f Q');
const SIGNED_AP = stream('/Type /XObject /Subtype /Form /BBox [0 0 280 60] /Resources <<>>', 'q 0 0 1 rg 0 0 140 30 re f Q');

/** A classic-xref PDF of the given objects (number → body), as pyHanko's hand-written samples are. */
export function pdfOf(objects: Record<number, string>, opts: { trailerExtra?: string; info?: number } = {}): Uint8Array {
  const nums = Object.keys(objects)
    .map(Number)
    .sort((a, b) => a - b);
  let out = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets = new Map<number, number>();
  for (const n of nums) {
    offsets.set(n, Buffer.byteLength(out, 'latin1'));
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const size = nums[nums.length - 1]! + 1;
  const xrefAt = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${size}\n0000000000 65535 f \n`;
  for (let n = 1; n < size; n++) {
    const off = offsets.get(n);
    out += off === undefined ? '0000000000 00000 f \n' : `${String(off).padStart(10, '0')} 00000 n \n`;
  }
  out += `trailer\n<</Size ${size} /Root 1 0 R${opts.info ? ` /Info ${opts.info} 0 R` : ''} /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]${
    opts.trailerExtra ? ` ${opts.trailerExtra}` : ''
  }>>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

/** Appends `objects` as one incremental update and signs its placeholder (the last one in the file). */
export function signedUpdate(pdf: Uint8Array, objects: UpdateObject[], signer: Signer, opts: Parameters<typeof appendUpdate>[2] = {}): Uint8Array {
  return fillSignature(appendUpdate(pdf, objects, opts), { signer });
}

const PAGE = (annots: string) =>
  `<</Type /Page /Parent 2 0 R /Resources <</Font <</F1 <</Type /Font /Subtype /Type1 /BaseFont /Times-Roman>>>>>> /Contents 4 0 R /Annots ${annots}>>`;
const CONTENT = stream('', 'BT /F1 18 Tf 0 0 Td (Hello World) Tj ET');
const sigField = (name: string, rect: string, extra: string) =>
  `<</FT /Sig /T (${name}) /Type /Annot /Subtype /Widget /F 132 /Rect ${rect} /P 3 0 R${extra}>>`;
const RECT1 = '[10 10 290 70]';
const RECT2 = '[10 74 290 134]';

/**
 * pyHanko's MINIMAL_TWO_FIELDS with Sig1 signed in the first revision (as its form-update-* samples are):
 * 1 catalog, 2 pages, 3 page, 4 content, 5 /AcroForm, 6 Sig1 (signed, value 11), 8 Sig2 (empty, appearance
 * `sig2Ap`), 9 Sig2's blank appearance stream. `catalogExtra` and `extra` add entries and objects.
 */
export function twoFieldsSignedOnce(
  signer: Signer,
  o: { sig2Ap?: string; catalogExtra?: string; extra?: Record<number, string>; trailerExtra?: string } = {},
): Uint8Array {
  const base = pdfOf(
    {
      1: `<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R${o.catalogExtra ?? ''}>>`,
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      3: PAGE('[6 0 R 8 0 R]'),
      4: CONTENT,
      5: '<</Fields [6 0 R 8 0 R] /SigFlags 3>>',
      6: sigField('Sig1', RECT1, ' /AP <</N 7 0 R>> /V 11 0 R'),
      7: SIGNED_AP,
      8: sigField('Sig2', RECT2, ` /AP ${o.sig2Ap ?? '<</N 9 0 R>>'}`),
      9: BLANK_AP,
      11: sigPlaceholder(),
      ...o.extra,
    },
    { trailerExtra: o.trailerExtra },
  );
  return fillSignature(base, { signer });
}

/** The second signing revision's signature field Sig2 (object 8) with its value (object 15). */
const sig2Signed = (ap: string) => ({ num: 8, body: sigField('Sig2', RECT2, ` /AP ${ap} /V 15 0 R`) });

// ---- test_appearance_update_edge_cases / test_disallow_appearance_stream_override_if_clobbers -----------------

/**
 * `form-update-override-appearance-stream-ap-indirect.pdf`: Sig2's /AP is an indirect dictionary (10) whose /N is
 * the blank stream 9; the signing revision overwrites stream 9 in place with the signature's appearance.
 * `sneaky` makes the overwritten stream (or, `'ap-dict'`, the /AP dictionary) reachable from /Root /FooBar too.
 */
export function overrideApStreamApIndirect(signer: Signer, sneaky?: 'stream' | 'ap-dict'): Uint8Array {
  const base = twoFieldsSignedOnce(signer, {
    sig2Ap: '10 0 R',
    extra: { 10: '<</N 9 0 R>>' },
    catalogExtra: sneaky === 'stream' ? ' /FooBar 9 0 R' : sneaky === 'ap-dict' ? ' /FooBar 10 0 R' : '',
  });
  return signedUpdate(base, [sig2Signed('10 0 R'), { num: 9, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

/** The same as form-update-override-appearance-stream(-sneaky).pdf, with a direct /AP (the corpus has both). */
export function overrideApStream(signer: Signer, sneaky = false): Uint8Array {
  const base = twoFieldsSignedOnce(signer, { catalogExtra: sneaky ? ' /FooBar 9 0 R' : '' });
  return signedUpdate(base, [sig2Signed('<</N 9 0 R>>'), { num: 9, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

/**
 * `form-update-no-override-appearance-stream-ap-indirect(-sneaky).pdf`: Sig2's /AP is the indirect dictionary 10;
 * the signing revision gives Sig2 a new direct /AP with a new stream (17) and leaves 10 alone. Sneaky: dictionary
 * 10 is also /Root /FooBar — an /AP dictionary used in two places (pyHanko refuses any update of it then).
 */
export function noOverrideApIndirect(signer: Signer, sneaky = false): Uint8Array {
  const base = twoFieldsSignedOnce(signer, { sig2Ap: '10 0 R', extra: { 10: '<</N 9 0 R>>' }, catalogExtra: sneaky ? ' /FooBar 10 0 R' : '' });
  return signedUpdate(base, [sig2Signed('<</N 17 0 R>>'), { num: 17, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

/**
 * `form-update-ap-indirect-sneaky-trailer.pdf`: as override-appearance-stream-ap-indirect, but the /AP dictionary
 * (10) is also reachable from the trailer (/FooBar 10 0 R in the signed revision's trailer).
 */
export function apIndirectSneakyTrailer(signer: Signer): Uint8Array {
  const base = twoFieldsSignedOnce(signer, { sig2Ap: '10 0 R', extra: { 10: '<</N 9 0 R>>' }, trailerExtra: '/FooBar 10 0 R' });
  return signedUpdate(base, [sig2Signed('10 0 R'), { num: 9, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

/**
 * `form-update-original-ap-type-wrong.pdf`: in the signed revision Sig2's /AP is not a dictionary (a stream given
 * directly, 9 0 R); the signing revision replaces it with a proper /AP dictionary and a new stream.
 */
export function originalApTypeWrong(signer: Signer): Uint8Array {
  const base = twoFieldsSignedOnce(signer, { sig2Ap: '9 0 R' });
  return signedUpdate(base, [sig2Signed('<</N 17 0 R>>'), { num: 17, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

/**
 * An appearance stream shared by two annotations: Sig2's blank stream 9 is also the appearance of a Square
 * annotation (12) on the page; the signing revision overwrites 9 in place, redrawing the other annotation.
 */
export function overrideApStreamSharedWithAnnotation(signer: Signer): Uint8Array {
  const base = pdfOf({
    1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R>>',
    2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
    3: PAGE('[6 0 R 8 0 R 12 0 R]'),
    4: CONTENT,
    5: '<</Fields [6 0 R 8 0 R] /SigFlags 3>>',
    6: sigField('Sig1', RECT1, ' /AP <</N 7 0 R>> /V 11 0 R'),
    7: SIGNED_AP,
    8: sigField('Sig2', RECT2, ' /AP <</N 9 0 R>>'),
    9: BLANK_AP,
    11: sigPlaceholder(),
    12: '<</Type /Annot /Subtype /Square /Rect [200 100 280 140] /P 3 0 R /AP <</N 9 0 R>>>>',
  });
  const signed = fillSignature(base, { signer });
  return signedUpdate(signed, [sig2Signed('<</N 9 0 R>>'), { num: 9, body: SIGNED_AP }, { num: 15, body: sigPlaceholder() }], signer);
}

// ---- test_diff_analysis_add_extensions_dict / test_diff_analysis_update_indirect_extensions_not_all_paths -----

const ISO_EXTENSION =
  '/ISO_ [<</Type /DeveloperExtensions /BaseVersion /2.0 /ExtensionLevel 32002 /URL (https://www.iso.org/standard/45875.html) /ExtensionRevision (:2022)>>]';
/** The XMP packet pyHanko writes when it signs (modify date and producer only). */
export const PYHANKO_XMP = stream(
  '/Type /Metadata /Subtype /XML',
  '<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="pyHanko 0.15.1">\n' +
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description xmlns:pdf="http://ns.adobe.com/pdf/1.3/" ' +
    'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:ModifyDate="2022-11-16T00:06:20+01:00" pdf:Producer="pyHanko 0.15.1" rdf:about="" />\n' +
    '</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end="r"?>',
);

/**
 * `extensions-direct.pdf` / `extensions-indirect.pdf` / `extensions-update-direct.pdf` /
 * `extensions-update-indirect.pdf`: the second signing revision (Sig2) writes the catalog with /Version /2.0, an
 * ISO_ developer extension and pyHanko's XMP packet. `start`: what the signed revision's catalog has (no
 * /Extensions, or an empty direct or indirect one); `write`: direct or indirect in the update. With `alsoAt`,
 * the indirect /Extensions dictionary of the signed revision is also /Root /DontOverrideMe (…-not-all-paths).
 */
export function extensionsUpdate(
  signer: Signer,
  o: { start: 'none' | 'direct' | 'indirect'; write: 'direct' | 'indirect'; alsoAt?: string; extensions?: string },
): Uint8Array {
  const startExt = o.start === 'direct' ? ' /Extensions <<>>' : o.start === 'indirect' ? ' /Extensions 12 0 R' : '';
  const base = twoFieldsSignedOnce(signer, {
    catalogExtra: `${startExt}${o.alsoAt ? ` /${o.alsoAt} 12 0 R` : ''}`,
    extra: o.start === 'indirect' ? { 12: '<<>>' } : {},
  });
  const ext = `<<${o.extensions ?? ISO_EXTENSION}>>`;
  // An indirect /Extensions is rewritten in place when the signed revision had one (what pyHanko's writer does).
  const extNum = o.start === 'indirect' ? 12 : 16;
  const objects: UpdateObject[] = [
    {
      num: 1,
      body: `<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Version /2.0 /Extensions ${o.write === 'direct' ? ext : `${extNum} 0 R`} /Metadata 19 0 R${
        o.alsoAt ? ` /${o.alsoAt} 12 0 R` : ''
      }>>`,
    },
    sig2Signed('<</N 17 0 R>>'),
    { num: 17, body: SIGNED_AP },
    { num: 19, body: PYHANKO_XMP },
    { num: 15, body: sigPlaceholder() },
  ];
  if (o.write === 'indirect') objects.push({ num: extNum, body: ext });
  return signedUpdate(base, objects, signer);
}

// ---- test_validate_separate_annot_with_indir_kids / test_double_sig_create_deep_field_post_sign -----------------

/**
 * `separate-annots-kids-indir.pdf`: signature fields whose widget is a separate annotation in /Kids, the /Kids
 * array an indirect object. Sig1 (6, kids array 7, widget 8) is signed in the first revision; the second signing
 * revision creates Sig2 the same way (12, kids array 13, widget 14) and signs it.
 */
export function separateAnnotsIndirectKids(signer: Signer): Uint8Array {
  const widget = (parent: number, rect: string, ap: number) =>
    `<</Type /Annot /Subtype /Widget /F 4 /Rect ${rect} /P 3 0 R /Parent ${parent} 0 R /AP <</N ${ap} 0 R>>>>`;
  const base = fillSignature(
    pdfOf({
      1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R>>',
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      3: PAGE('[8 0 R]'),
      4: CONTENT,
      5: '<</Fields [6 0 R] /SigFlags 3>>',
      6: '<</FT /Sig /T (Sig1) /Kids 7 0 R /V 11 0 R>>',
      7: '[8 0 R]',
      8: widget(6, '[20 20 80 40]', 9),
      9: SIGNED_AP,
      11: sigPlaceholder(),
    }),
    { signer },
  );
  return signedUpdate(
    base,
    [
      { num: 3, body: PAGE('[8 0 R 14 0 R]') },
      { num: 5, body: '<</Fields [6 0 R 12 0 R] /SigFlags 3>>' },
      { num: 12, body: '<</FT /Sig /T (Sig2) /Kids 13 0 R /V 15 0 R>>' },
      { num: 13, body: '[14 0 R]' },
      { num: 14, body: widget(12, '[20 120 80 140]', 16) },
      { num: 16, body: SIGNED_AP },
      { num: 15, body: sigPlaceholder() },
    ],
    signer,
  );
}

/**
 * test_double_sig_create_deep_field_post_sign / test_double_sig_fill_deep_field_post_sign: the signed revision
 * has a non-terminal field NewSigs (12, its /Kids the indirect array 13) holding the empty signature field NewSig1
 * (14). `fill`: the second signing revision signs NewSigs.NewSig1 (pyHanko: allowed); otherwise it creates
 * NewSigs.NewSig2 in NewSigs' /Kids (pyHanko: OTHER, the /Kids array of a field is not a place to add fields).
 */
export function deepSignatureField(signer: Signer, fill: boolean): Uint8Array {
  const base = fillSignature(
    pdfOf({
      1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R>>',
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      3: PAGE('[6 0 R 14 0 R]'),
      4: CONTENT,
      5: '<</Fields [6 0 R 12 0 R] /SigFlags 3>>',
      6: sigField('Sig1', RECT1, ' /AP <</N 7 0 R>> /V 11 0 R'),
      7: SIGNED_AP,
      11: sigPlaceholder(),
      12: '<</T (NewSigs) /Kids 13 0 R>>',
      13: '[14 0 R]',
      14: '<</FT /Sig /T (NewSig1) /Parent 12 0 R /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R>>',
    }),
    { signer },
  );
  if (fill) {
    return signedUpdate(
      base,
      [
        { num: 14, body: '<</FT /Sig /T (NewSig1) /Parent 12 0 R /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R /V 15 0 R>>' },
        { num: 15, body: sigPlaceholder() },
      ],
      signer,
    );
  }
  return signedUpdate(
    base,
    [
      { num: 3, body: PAGE('[6 0 R 14 0 R 16 0 R]') },
      { num: 13, body: '[14 0 R 16 0 R]' },
      { num: 16, body: '<</FT /Sig /T (NewSig2) /Parent 12 0 R /Type /Annot /Subtype /Widget /F 132 /Rect [0 0 0 0] /P 3 0 R /V 15 0 R>>' },
      { num: 15, body: sigPlaceholder() },
    ],
    signer,
  );
}

// ---- PAdES: DSS with indirect arrays and VRI entries (pades-lta-dss-indirect-arrs-test.pdf) ------------------

/** A stream of raw DER (a certificate, CRL or OCSP response) for the DSS. */
export const derStream = (der: Uint8Array) =>
  Buffer.concat([Buffer.from(`<</Length ${der.length}>>\nstream\n`, 'latin1'), Buffer.from(der), Buffer.from('\nendstream', 'latin1')]);

/** The first revision only: MINIMAL with one signature field Sig1 (6) signed, widget merged, invisible. */
export function minimalSignedOnce(signer: Signer, catalogExtra = ''): Uint8Array {
  return fillSignature(
    pdfOf({
      1: `<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R${catalogExtra}>>`,
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      3: PAGE('[6 0 R]'),
      4: CONTENT,
      5: '<</Fields [6 0 R] /SigFlags 3>>',
      6: sigField('Sig1', '[0 0 0 0]', ' /V 11 0 R'),
      11: sigPlaceholder(),
    }),
    { signer },
  );
}

/** The catalog `minimalSignedOnce` writes, with further entries. */
export const minimalCatalog = (extra: string) => `<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R${extra}>>`;

/**
 * An incremental update whose objects sit in an object stream, indexed by a cross-reference stream (what
 * Acrobat and iText write for a DSS after a certification): `compressed` go into the object stream
 * `objStmNum`, `plain` are written as ordinary objects, the xref stream is object `xrefNum`.
 */
export function appendCompressedUpdate(
  pdf: Uint8Array,
  compressed: Array<{ num: number; body: string }>,
  plain: Array<{ num: number; body: string | Uint8Array }>,
  o: { objStmNum: number; xrefNum: number; root: number; prev: number; size: number; info?: number },
): Uint8Array {
  const chunks: Buffer[] = [Buffer.from(pdf)];
  let pos = pdf.length;
  const push = (b: Buffer) => {
    chunks.push(b);
    pos += b.length;
  };
  if (pdf[pdf.length - 1] !== 0x0a) push(Buffer.from('\n'));
  const entries: Array<{ num: number; type: number; a: number; b: number }> = [];
  let header = '';
  let bodies = '';
  compressed.forEach((c, i) => {
    header += `${c.num} ${Buffer.byteLength(bodies, 'latin1')} `;
    bodies += `${c.body}\n`;
    entries.push({ num: c.num, type: 2, a: o.objStmNum, b: i });
  });
  const data = zlib.deflateSync(Buffer.from(header + bodies, 'latin1'));
  entries.push({ num: o.objStmNum, type: 1, a: pos, b: 0 });
  push(
    Buffer.concat([
      Buffer.from(
        `${o.objStmNum} 0 obj\n<</Type /ObjStm /N ${compressed.length} /First ${Buffer.byteLength(header, 'latin1')} /Filter /FlateDecode /Length ${data.length}>>\nstream\n`,
        'latin1',
      ),
      data,
      Buffer.from('\nendstream\nendobj\n', 'latin1'),
    ]),
  );
  for (const p of plain) {
    entries.push({ num: p.num, type: 1, a: pos, b: 0 });
    push(Buffer.concat([Buffer.from(`${p.num} 0 obj\n`), Buffer.from(p.body as string | Uint8Array), Buffer.from('\nendobj\n')]));
  }
  entries.push({ num: o.xrefNum, type: 1, a: pos, b: 0 });
  entries.sort((x, y) => x.num - y.num);
  const rows = Buffer.alloc(entries.length * 7);
  entries.forEach((e, i) => {
    rows.writeUInt8(e.type, i * 7);
    rows.writeUInt32BE(e.a, i * 7 + 1);
    rows.writeUInt16BE(e.b, i * 7 + 5);
  });
  const index = entries.map((e) => `${e.num} 1`).join(' ');
  const xrefAt = pos;
  push(
    Buffer.concat([
      Buffer.from(
        `${o.xrefNum} 0 obj\n<</Type /XRef /Size ${o.size} /W [1 4 2] /Index [${index}] /Root ${o.root} 0 R${o.info ? ` /Info ${o.info} 0 R` : ''} /Prev ${o.prev} /Length ${rows.length}>>\nstream\n`,
        'latin1',
      ),
      rows,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
    ]),
  );
  return new Uint8Array(Buffer.concat(chunks));
}

// ---- PAdES LTV updates (DSS, document timestamps), as pyHanko, iText and Acrobat write them -------------------

/** The catalog and highest object number of a PDF's last revision (to write an update against it). */
function lastState(pdf: Uint8Array) {
  const doc = openPdf(pdf);
  const rootRef = doc.trailerAt(doc.last)!.map.get('Root');
  if (!isRef(rootRef)) throw new Error('no /Root reference');
  const catalog = doc.catalogAt(doc.last)!;
  const revision = doc.revisions[doc.last]!;
  return { doc, root: rootRef.num, catalog, next: nextObjectNumber(pdf), startxref: revision.startxref! };
}

/** The catalog of `pdf` with entries replaced (raw PDF syntax for each value; undefined removes the entry). */
export function catalogWith(pdf: Uint8Array, entries: Record<string, string | undefined>): string {
  const { catalog } = lastState(pdf);
  const parts: string[] = [];
  for (const [k, v] of catalog.map) if (!(k in entries)) parts.push(`/${k} ${serialize(v)}`);
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) parts.push(`/${k} ${v}`);
  return `<<${parts.join(' ')}>>`;
}

export interface LtvData {
  certs: Uint8Array[];
  crls: Uint8Array[];
  /** VRI entries: the signature's CMS (its key is the upper-case hex SHA-1) and what serves it. */
  vri: Array<{ signatureCms: Uint8Array; certs?: Uint8Array[]; crls?: Uint8Array[] }>;
}

/**
 * A DSS update. `indirect`: /Certs, /CRLs, /VRI, each VRI entry and its arrays as indirect objects (pyHanko's
 * pades-lta-dss-indirect-arrs-test.pdf; iText writes VRI entries so); else direct arrays. `extensions`: the
 * catalog also gets /Extensions with the ESIC developer extension (what iText and Acrobat add with a DSS).
 * `objectStreams`: the dictionaries and arrays go into an object stream indexed by an xref stream.
 * Returns the bytes and the object numbers used (for later updates that extend the same objects in place).
 */
export function dssUpdate(
  pdf: Uint8Array,
  data: LtvData,
  o: { indirect?: boolean; extensions?: boolean | string; objectStreams?: boolean; extra?: UpdateObject[] } = {},
): { pdf: Uint8Array; dss: number; certs?: number; crls?: number; vri?: number } {
  const s = lastState(pdf);
  let n = s.next;
  const streams: UpdateObject[] = [];
  const dicts: Array<{ num: number; body: string }> = [];
  const streamRef = (der: Uint8Array) => {
    const num = n++;
    streams.push({ num, body: new Uint8Array(derStream(der)) });
    return `${num} 0 R`;
  };
  const certRefs = data.certs.map(streamRef);
  const crlRefs = data.crls.map(streamRef);
  const indirectOr = (body: string) => {
    if (!o.indirect) return { value: body, num: undefined };
    const num = n++;
    dicts.push({ num, body });
    return { value: `${num} 0 R`, num };
  };
  const certs = indirectOr(`[${certRefs.join(' ')}]`);
  const crls = indirectOr(`[${crlRefs.join(' ')}]`);
  const vriEntries = data.vri.map((v) => {
    const key = crypto.createHash('sha1').update(v.signatureCms).digest('hex').toUpperCase();
    const cert = v.certs?.length ? indirectOr(`[${v.certs.map(streamRef).join(' ')}]`).value : undefined;
    const crl = v.crls?.length ? indirectOr(`[${v.crls.map(streamRef).join(' ')}]`).value : undefined;
    const entry = indirectOr(`<</Type /VRI${cert ? ` /Cert ${cert}` : ''}${crl ? ` /CRL ${crl}` : ''} /TU (D:20201101000000Z)>>`);
    return `/${key} ${entry.value}`;
  });
  const vri = indirectOr(`<<${vriEntries.join(' ')}>>`);
  const dss = n++;
  dicts.push({ num: dss, body: `<</Type /DSS /Certs ${certs.value} /CRLs ${crls.value} /VRI ${vri.value}>>` });
  const catalog = catalogWith(pdf, {
    DSS: `${dss} 0 R`,
    ...(o.extensions
      ? {
          Extensions:
            typeof o.extensions === 'string' ? o.extensions : '<</ESIC <</Type /DeveloperExtensions /BaseVersion /1.7 /ExtensionLevel 1>>>>',
        }
      : {}),
  });
  const ids = { dss, certs: certs.num, crls: crls.num, vri: vri.num };
  if (o.objectStreams) {
    const objStmNum = n++;
    const xrefNum = n++;
    return {
      pdf: appendCompressedUpdate(pdf, [{ num: s.root, body: catalog }, ...dicts], [...streams, ...(o.extra ?? [])], {
        objStmNum,
        xrefNum,
        root: s.root,
        prev: s.startxref,
        size: xrefNum + 1,
      }),
      ...ids,
    };
  }
  return {
    pdf: appendUpdate(pdf, [{ num: s.root, body: catalog }, ...dicts.map((d) => ({ num: d.num, body: d.body })), ...streams, ...(o.extra ?? [])]),
    ...ids,
  };
}

/** A certification signature (DocMDP, permission `p`) in the first revision of MINIMAL. */
export function minimalCertified(signer: Signer, p: 1 | 2 | 3): Uint8Array {
  return fillSignature(
    pdfOf({
      1: '<</Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Perms <</DocMDP 11 0 R>>>>',
      2: '<</Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 300 144]>>',
      3: PAGE('[6 0 R]'),
      4: CONTENT,
      5: '<</Fields [6 0 R] /SigFlags 3>>',
      6: sigField('Sig1', '[0 0 0 0]', ' /V 11 0 R'),
      11: sigPlaceholder({
        reference: ` /Reference [<</Type /SigRef /TransformMethod /DocMDP /TransformParams <</Type /TransformParams /P ${p} /V /1.2>>>>]`,
      }),
    }),
    { signer },
  );
}
