/**
 * The document timestamp of PAdES B-LTA (ISO 32000-2 §12.8.5, ETSI EN 319 142-1 §5.4.3): a signature field
 * whose value is a `/Type /DocTimeStamp` dictionary with `/SubFilter /ETSI.RFC3161`, whose /Contents is an
 * RFC 3161 token over the digest of its /ByteRange. Appended as an incremental update through the one
 * writer: the new field and widget (invisible, on the last page), the signature dictionary, and rewrites
 * of exactly the objects that list them (the AcroForm or its /Fields array, the page or its /Annots array).
 */
import { FolioError } from '../errors.js';
import { isName, isRef, isString, type PdfDict, type PdfRef, type PdfValue } from './objects.js';
import { dictText, UpdateBuilder, updateBase, type UpdateBase } from './dss.js';
import { serialize } from './serialize.js';

export interface DocTimestampPlaceholder {
  /** The document with the update; /ByteRange filled, /Contents still zeros. */
  bytes: Uint8Array;
  byteRange: [number, number, number, number];
  /** Offsets of the hex digits inside `<…>` and their count (twice the room in bytes). */
  hexAt: number;
  hexLength: number;
  fieldName: string;
}

const MAX_FIELDS = 100_000;
const MAX_PAGE_DEPTH = 64;

/** The last page of the page tree, following the last kid down (bounded); undefined for a strange tree. */
function lastPage(base: UpdateBase): PdfRef | undefined {
  let node: PdfValue | undefined = base.catalog.map.get('Pages');
  for (let depth = 0; depth < MAX_PAGE_DEPTH && isRef(node); depth++) {
    const dict = base.doc.dictAt(node, base.rev);
    if (!dict) return undefined;
    if (isName(dict.map.get('Type'), 'Page')) return node;
    const kids = base.doc.deref(dict.map.get('Kids'), base.rev);
    if (!Array.isArray(kids) || kids.length === 0) return undefined;
    node = kids[kids.length - 1];
  }
  return undefined;
}

/**
 * Adds `ref` to the array at `dict[key]`: an indirect array is rewritten in place, a direct one (or none)
 * through `rewriteOwner`, which receives the owner dictionary's new entry text.
 */
function pushToArray(u: UpdateBuilder, dict: PdfDict | undefined, key: string, ref: PdfRef, rewriteOwner: (entry: string) => void): void {
  const base = u.base;
  const raw = dict?.map.get(key);
  const current = base.doc.deref(raw, base.rev);
  const items = Array.isArray(current) ? current : [];
  const text = serialize([...items, ref]);
  if (isRef(raw) && Array.isArray(current)) u.put(raw, text);
  else rewriteOwner(text);
}

function existingNames(base: UpdateBase, fields: PdfValue | undefined): Set<string> {
  const out = new Set<string>();
  const arr = base.doc.deref(fields, base.rev);
  if (!Array.isArray(arr)) return out;
  for (const f of arr.slice(0, MAX_FIELDS)) {
    const t = base.doc.dictAt(f, base.rev)?.map.get('T');
    if (isString(t)) out.add(Buffer.from(t.bytes).toString('latin1'));
  }
  return out;
}

/**
 * Appends the document-timestamp field with a zeroed /Contents of `room` bytes; the caller stamps it. `pdf`
 * is read by the reader, or is the base an update of the same request left (`dssUpdate(...).next`).
 */
export function appendDocTimestampPlaceholder(pdf: Uint8Array | UpdateBase, room: number): DocTimestampPlaceholder {
  const base = pdf instanceof Uint8Array ? updateBase(pdf) : pdf;
  const u = new UpdateBuilder(base);
  const { catalog, catalogRef } = base;
  const sigRef = u.reserve();
  const widgetRef = u.reserve();
  const page = lastPage(base);

  const catalogSet: Record<string, string> = {};
  const acroRaw = catalog.map.get('AcroForm');
  const acro = base.doc.dictAt(acroRaw, base.rev);
  const names = existingNames(base, acro?.map.get('Fields'));
  let n = 1;
  while (names.has(`Folio-Timestamp-${n}`)) n++;
  const fieldName = `Folio-Timestamp-${n}`;

  // AcroForm /Fields gets the new field; /SigFlags 3 (signatures exist, append only).
  pushToArray(u, acro, 'Fields', widgetRef, (fieldsText) => {
    const text = dictText(acro, { Fields: fieldsText, SigFlags: '3' });
    if (isRef(acroRaw) && acro) u.put(acroRaw, text);
    else catalogSet.AcroForm = text;
  });
  if (page) {
    const pageDict = base.doc.dictAt(page, base.rev);
    pushToArray(u, pageDict, 'Annots', widgetRef, (annotsText) => u.put(page, dictText(pageDict, { Annots: annotsText })));
  }
  if (Object.keys(catalogSet).length > 0) u.put(catalogRef, dictText(catalog, catalogSet));

  u.put(
    widgetRef,
    `<< /Type /Annot /Subtype /Widget /FT /Sig /T (${fieldName}) /V ${sigRef.num} 0 R /F 132 /Rect [0 0 0 0]${page ? ` /P ${page.num} ${page.gen} R` : ''} >>`,
  );

  const head = `${sigRef.num} 0 obj\n<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange `;
  const rangeSlot = '[0 0000000000 0000000000 0000000000]';
  const mid = ' /Contents <';
  const hexLength = room * 2;
  const tail = `> /Prop_Build << /App << /Name /Folio >> >> >>\nendobj\n`;
  const sigBytes = Buffer.from(head + rangeSlot + mid + '0'.repeat(hexLength) + tail, 'latin1');
  const { bytes, offsets } = u.write({ objectNumber: sigRef.num, generation: 0, bytes: sigBytes });

  const sigAt = offsets.get(sigRef.num)!;
  const lt = sigAt + head.length + rangeSlot.length + mid.length - 1;
  const gt = lt + hexLength + 1;
  const byteRange: [number, number, number, number] = [0, lt, gt + 1, bytes.length - gt - 1];
  const rangeText = `[${byteRange.join(' ')}]`.padEnd(rangeSlot.length, ' ');
  if (rangeText.length !== rangeSlot.length) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The document is too large for a timestamp placeholder');
  bytes.set(Buffer.from(rangeText, 'latin1'), sigAt + head.length);
  return { bytes, byteRange, hexAt: lt + 1, hexLength, fieldName };
}

/** Writes the DER token into the placeholder's /Contents (uppercase hex, zero padding kept). */
export function fillDocTimestamp(p: DocTimestampPlaceholder, token: Uint8Array): boolean {
  const hex = Buffer.from(token).toString('hex').toUpperCase();
  if (hex.length > p.hexLength) return false;
  p.bytes.set(Buffer.from(hex, 'latin1'), p.hexAt);
  return true;
}

/** The bytes a document timestamp covers: everything but the /Contents gap. */
export function byteRangeParts(bytes: Uint8Array, r: readonly number[]): Uint8Array[] {
  return [bytes.subarray(r[0]!, r[0]! + r[1]!), bytes.subarray(r[2]!, r[2]! + r[3]!)];
}
