/**
 * The Document Security Store (ISO 32000-2 §12.8.4.3, ETSI EN 319 142-1 §5.4): the validation data of a
 * PAdES B-LT signature — certificates, OCSP responses and CRLs as streams, listed in the catalog's /DSS
 * and, per signature, in a /VRI entry keyed by the uppercase hex SHA-1 of the signature's /Contents — and
 * the document timestamp of B-LTA (doc-timestamp.ts). Both are written as incremental updates through the
 * one incremental writer, from what the forensic reader found in force at the last revision: only the
 * objects that change (the catalog or the DSS dictionary) are rewritten, so earlier signatures stay valid.
 * An existing DSS (an earlier B-LT signature, or another product's) is carried on, its entries kept.
 */
import crypto from 'node:crypto';
import { FolioError } from '../errors.js';
import { isDict, isRef, isStream, type PdfDict, type PdfRef, type PdfValue } from './objects.js';
import { PdfDocument } from './reader.js';
import { serialize } from './serialize.js';
import { appendIncrementalUpdate, lastXrefOf, type LastXref, type TrailerEntries, type UpdateObject } from './incremental.js';
import { afterUpdate, type ObjectLookup } from './xref-chain.js';

/** Certificates, OCSP responses and CRLs, each as DER. */
export interface ValidationData {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

export interface DssContent extends ValidationData {
  /** Per signature: the VRI key (see `vriKey`) and the data that validates that signature. */
  vri: Array<{ key: string; data: ValidationData }>;
}

/**
 * Existing DSS entries are compared by content (to add each certificate or response once) up to this count
 * and this many decoded bytes in all; beyond, entries are kept as they are and ours appended (a hostile
 * document's DSS must not make signing inflate megabytes).
 */
const MAX_DEDUP_ENTRIES = 10_000;
const MAX_DEDUP_BYTES = 8 * 1024 * 1024;

/** The VRI key of a signature: uppercase hex SHA-1 of its /Contents string (the whole placeholder, padding included). */
export function vriKey(contents: Uint8Array): string {
  return crypto.createHash('sha1').update(contents).digest('hex').toUpperCase();
}

/** A signature's /Contents bytes, from its /ByteRange gap `[b, c)` that holds `<hex>`. */
export function contentsInGap(pdf: Uint8Array, byteRange: readonly number[]): Uint8Array {
  const [, b, c] = byteRange as [number, number, number, number];
  return new Uint8Array(Buffer.from(Buffer.from(pdf.subarray(b + 1, c - 1)).toString('latin1'), 'hex'));
}

/**
 * What an update needs from the document as of its last revision: read by the reader (`updateBase`), or
 * known from the update just written before it (`next` of `UpdateBuilder.write`, xref-chain.ts).
 */
export interface UpdateBase {
  doc: ObjectLookup;
  last: LastXref;
  rev: number;
  catalogRef: PdfRef;
  catalog: PdfDict;
}

export function updateBase(pdf: Uint8Array): UpdateBase {
  const doc = new PdfDocument(pdf);
  const last = lastXrefOf(doc);
  const rev = doc.last;
  const catalogRef = doc.catalogRefAt(rev);
  const catalog = doc.catalogAt(rev);
  if (!last || last.kind === 'rebuilt' || !catalogRef || !catalog) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The signed PDF cannot take a further incremental update (its cross-reference data is unusable)');
  }
  return { doc, last, rev, catalogRef, catalog };
}

/** Collects the objects of one update and numbers new ones after the document's /Size. */
export class UpdateBuilder {
  private readonly objects = new Map<number, UpdateObject>();
  private next: number;

  constructor(readonly base: UpdateBase) {
    this.next = base.last.size;
  }

  reserve(): PdfRef {
    return { kind: 'ref', num: this.next++, gen: 0 };
  }

  /** Writes `text` (a PDF value) as object `ref`: a new one, or a rewrite of an existing one. */
  put(ref: PdfRef, text: string): void {
    this.objects.set(ref.num, {
      objectNumber: ref.num,
      generation: ref.gen,
      bytes: Buffer.from(`${ref.num} ${ref.gen} obj\n${text}\nendobj\n`, 'latin1'),
    });
  }

  putBytes(ref: PdfRef, bytes: Uint8Array): void {
    this.objects.set(ref.num, { objectNumber: ref.num, generation: ref.gen, bytes });
  }

  /** A new stream object holding `data` as is (DER is not worth compressing much, and readers need no filter). */
  stream(data: Uint8Array): PdfRef {
    const ref = this.reserve();
    const head = Buffer.from(`${ref.num} 0 obj\n<< /Length ${data.length} >>\nstream\n`, 'latin1');
    this.putBytes(ref, Buffer.concat([head, data, Buffer.from('\nendstream\nendobj\n', 'latin1')]));
    return ref;
  }

  /**
   * Appends the update. Objects in `last` (numbers below the base's /Size) are rewrites; `lastObject`, if
   * given, is written after all others (a signature dictionary whose offsets the caller patches).
   */
  write(lastObject?: UpdateObject): { bytes: Uint8Array; offsets: Map<number, number>; next: UpdateBase } {
    const { last, doc, catalogRef } = this.base;
    const objects = [...this.objects.values()].sort((a, b) => a.objectNumber - b.objectNumber);
    if (lastObject) objects.push(lastObject);
    const highest = Math.max(this.next - 1, last.size - 1);
    const size = highest + 1 + (last.kind === 'stream' ? 1 : 0);
    const newId = crypto.randomBytes(16).toString('hex');
    const trailer: TrailerEntries = {
      root: `${catalogRef.num} ${catalogRef.gen} R`,
      ...(last.info ? { info: `${last.info.num} ${last.info.gen} R` } : {}),
      id: [last.firstId ?? newId, newId],
    };
    const update = appendIncrementalUpdate(doc.buf, last, objects, trailer, size);
    // What a further update in the same request chains to, without reading the output back.
    return { ...update, next: afterUpdate(this.base, update, { size, root: catalogRef, info: last.info, firstId: trailer.id![0] }) };
  }
}

/** A dictionary value with some keys replaced (insertion order kept, new keys appended). */
export function dictText(dict: PdfDict | undefined, set: Record<string, string>): string {
  const parts: string[] = [];
  for (const [k, v] of dict?.map ?? []) {
    if (k in set) continue;
    parts.push(`${serialize({ kind: 'name', name: k })} ${serialize(v)}`);
  }
  for (const [k, text] of Object.entries(set)) parts.push(`${serialize({ kind: 'name', name: k })} ${text}`);
  return `<<${parts.join(' ')}>>`;
}

const refText = (r: PdfRef) => `${r.num} ${r.gen} R`;

/** The references of an existing DSS array (`/Certs`, `/OCSPs`, `/CRLs`), with a content hash when affordable. */
function existingEntries(base: UpdateBase, value: PdfValue | undefined, budget: { bytes: number }): Array<{ ref: PdfRef; hash?: string }> {
  const arr = base.doc.deref(value, base.rev);
  if (!Array.isArray(arr)) return [];
  const refs = arr.filter(isRef);
  const hashing = refs.length <= MAX_DEDUP_ENTRIES;
  return refs.map((ref) => {
    if (!hashing || budget.bytes <= 0) return { ref };
    const obj = base.doc.resolve(ref.num, base.rev)?.value;
    if (!isStream(obj)) return { ref };
    try {
      const data = base.doc.decode(obj, budget.bytes);
      budget.bytes -= data.length;
      return { ref, hash: crypto.createHash('sha256').update(data).digest('hex') };
    } catch {
      budget.bytes = 0;
      return { ref };
    }
  });
}

/**
 * Appends a revision whose catalog /DSS holds the existing entries plus `content`. Each certificate,
 * response and CRL is written once (also when it is already in the DSS); the VRI entries refer to the
 * same streams.
 */
export function appendDss(pdf: Uint8Array, content: DssContent): Uint8Array {
  return dssUpdate(updateBase(pdf), content).bytes;
}

/** `appendDss` on a base already known (read, or chained from the signature's update); with what follows it. */
export function dssUpdate(base: UpdateBase, content: DssContent): { bytes: Uint8Array; next: UpdateBase } {
  const u = new UpdateBuilder(base);
  const dssValue = base.catalog.map.get('DSS');
  const dss = base.doc.dictAt(dssValue, base.rev);

  const lists = { Certs: content.certs, OCSPs: content.ocsps, CRLs: content.crls } as const;
  const byHash = new Map<string, PdfRef>();
  const arrays: Record<string, PdfRef[]> = {};
  const budget = { bytes: MAX_DEDUP_BYTES };
  for (const key of Object.keys(lists) as Array<keyof typeof lists>) {
    const refs: PdfRef[] = [];
    for (const e of existingEntries(base, dss?.map.get(key), budget)) {
      refs.push(e.ref);
      if (e.hash) byHash.set(e.hash, e.ref);
    }
    arrays[key] = refs;
  }
  const add = (key: keyof typeof lists, der: Uint8Array): PdfRef => {
    const hash = crypto.createHash('sha256').update(der).digest('hex');
    let ref = byHash.get(hash);
    if (!ref) {
      ref = u.stream(der);
      byHash.set(hash, ref);
      arrays[key]!.push(ref);
    }
    return ref;
  };
  for (const key of Object.keys(lists) as Array<keyof typeof lists>) for (const der of lists[key]) add(key, der);

  // /VRI: the existing entries as they are, ours added (a key already present is replaced).
  const vriDict = base.doc.dictAt(dss?.map.get('VRI'), base.rev);
  const vriSet: Record<string, string> = {};
  for (const { key, data } of content.vri) {
    const entry = (name: string, k: keyof typeof lists, ders: Uint8Array[]) =>
      ders.length > 0 ? `/${name} [${ders.map((d) => refText(add(k, d))).join(' ')}] ` : '';
    vriSet[key] = `<< ${entry('Cert', 'Certs', data.certs)}${entry('OCSP', 'OCSPs', data.ocsps)}${entry('CRL', 'CRLs', data.crls)}>>`;
  }
  const dssSet: Record<string, string> = { Type: '/DSS' };
  for (const [key, refs] of Object.entries(arrays)) if (refs.length > 0) dssSet[key] = `[${refs.map(refText).join(' ')}]`;
  if (content.vri.length > 0 || vriDict) dssSet.VRI = dictText(vriDict, vriSet);
  const dssText = dictText(isDict(dss) ? dss : undefined, dssSet);

  if (isRef(dssValue) && dss) {
    u.put(dssValue, dssText); // the catalog keeps pointing at it
  } else {
    const ref = u.reserve();
    u.put(ref, dssText);
    u.put(base.catalogRef, dictText(base.catalog, { DSS: refText(ref) }));
  }
  return u.write();
}
