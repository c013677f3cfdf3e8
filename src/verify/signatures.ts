/**
 * Finding signatures and checking each one's ByteRange and CMS. Signatures are found two ways: through the
 * signature fields of the final revision (what a viewer shows) and by scanning the raw bytes for every
 * dictionary holding a /ByteRange, so a signature that was unlinked from its field (or a second ByteRange
 * planted for wrapping) is still seen.
 */
import { FolioError } from '../errors.js';
import {
  decodePdfText,
  isDict,
  isName,
  isRef,
  isStream,
  isString,
  parsePdfDate,
  type PdfDict,
  type PdfDocument,
  type PdfValue,
  type PdfString,
} from '../pdf/index.js';
import type { Hash } from 'node:crypto';
import { verifyCms, createDigest, nodeHash, type CmsResult } from './cms.js';
import { PDF_NUMBER, salvageSignatureAt, salvageSignatureObject, type SalvagedSignature } from './salvage.js';

export type Coverage = 'ENTIRE_FILE' | 'ENTIRE_REVISION' | 'PARTIAL' | 'UNCLEAR';

export interface FoundSignature {
  fieldName: string | null;
  /** Object number of the field (terminal field) when reached through one. */
  fieldNum?: number;
  sigDict: PdfDict;
  /** Object number and body position of the signature dictionary when indirect and uncompressed. */
  sigNum?: number;
  sigOffset?: number;
  sigEnd?: number;
  /** Found only by scanning: no field of the final revision points at it. */
  orphaned: boolean;
  /**
   * The signature dictionary is stored inline in the field's /V (legal, if unusual): sigOffset/sigEnd are
   * then the body of the (uncompressed) field object that holds it.
   */
  inline?: boolean;
  /**
   * The reader refused the signature dictionary's object (salvage.ts): `sigDict` is what could be read with
   * its `/ByteRange` blanked (or an empty stand-in); the signature is reported, and reported malformed.
   */
  salvaged?: Pick<SalvagedSignature, 'byteRangeText' | 'stub'>;
}

/** Bodies of salvaged signature dictionaries, per document: their /ByteRange is no stray (strayByteRanges). */
const salvagedBodies = new WeakMap<PdfDocument, Map<number, number>>();

function rememberSalvaged(doc: PdfDocument, s: SalvagedSignature): void {
  let bodies = salvagedBodies.get(doc);
  if (!bodies) salvagedBodies.set(doc, (bodies = new Map()));
  bodies.set(s.offset, s.end);
}

function fromSalvage(s: SalvagedSignature, fieldName: string | null, fieldNum: number | undefined, orphaned: boolean): FoundSignature {
  return {
    fieldName,
    ...(fieldNum !== undefined ? { fieldNum } : {}),
    sigDict: s.sigDict,
    sigNum: s.num,
    sigOffset: s.offset,
    sigEnd: s.end,
    orphaned,
    salvaged: { byteRangeText: s.byteRangeText, stub: s.stub },
  };
}

export interface UnsignedSignatureField {
  fieldName: string;
  fieldNum?: number;
  hasAppearance: boolean;
}

export interface SignatureFields {
  signatures: FoundSignature[];
  unsigned: UnsignedSignatureField[];
  /** Object numbers of signature fields and their widgets at the final revision. */
  sigFieldNums: Set<number>;
  /** Object numbers of all other terminal fields and widgets. */
  formFieldNums: Set<number>;
  /** Object numbers of the fields that hold fields (non-terminal fields: /Kids with /T). */
  fieldNodeNums: Set<number>;
}

const MAX_FIELDS = 20_000;
/**
 * Signatures verified per document. Each one costs a CMS parse, a public-key operation, a digest of the bytes
 * it covers and a modification analysis; real documents carry a handful, the busiest a few dozen.
 */
export const MAX_SIGNATURES = 500;

export function findSignatures(doc: PdfDocument): SignatureFields {
  const last = doc.last;
  const out: SignatureFields = { signatures: [], unsigned: [], sigFieldNums: new Set(), formFieldNums: new Set(), fieldNodeNums: new Set() };
  const catalog = doc.catalogAt(last);
  const acroForm = doc.dictAt(catalog?.map.get('AcroForm'), last);
  const seen = new Set<number>();
  let count = 0;
  const walk = (v: PdfValue | undefined, parentName: string, parentFt: string | undefined, depth: number) => {
    if (depth > 32 || ++count > MAX_FIELDS) return;
    const num = isRef(v) ? v.num : undefined;
    if (num !== undefined) {
      if (seen.has(num)) return;
      seen.add(num);
    }
    const field = doc.dictAt(v, last);
    if (!field) return;
    const t = doc.deref(field.map.get('T'), last);
    const partial = isString(t) ? decodePdfText(t.bytes) : '';
    const name = partial ? (parentName ? `${parentName}.${partial}` : partial) : parentName;
    const ftV = doc.deref(field.map.get('FT'), last);
    const ft = isName(ftV) ? ftV.name : parentFt;
    const kids = doc.deref(field.map.get('Kids'), last);
    const fieldKids = Array.isArray(kids) ? kids.filter((k) => doc.dictAt(k, last)?.map.has('T')) : [];
    if (fieldKids.length > 0) {
      if (num !== undefined) out.fieldNodeNums.add(num);
      for (const k of fieldKids) walk(k, name, ft, depth + 1);
      return;
    }
    // Terminal field: itself (merged with its widget) and any widget kids.
    const widgets = Array.isArray(kids) ? kids.filter(isRef).map((k) => k.num) : [];
    const set = ft === 'Sig' ? out.sigFieldNums : out.formFieldNums;
    if (num !== undefined) set.add(num);
    for (const w of widgets) set.add(w);
    if (ft !== 'Sig') return;
    const vRaw = field.map.get('V');
    const vDict = doc.dictAt(vRaw, last);
    // A /V the reader cannot parse but that holds a /ByteRange is a signature, a malformed one (salvage.ts).
    const salvaged = !vDict && isRef(vRaw) ? salvageSignatureObject(doc, vRaw.num, last) : undefined;
    if (salvaged) {
      out.signatures.push(fromSalvage(salvaged, name || null, num, false));
      rememberSalvaged(doc, salvaged);
    } else if (vDict && (vDict.map.has('ByteRange') || vDict.map.has('Contents') || isName(vDict.map.get('Type'), 'Sig'))) {
      const found: FoundSignature = { fieldName: name || null, fieldNum: num, sigDict: vDict, orphaned: false };
      if (isRef(vRaw)) {
        const r = doc.resolve(vRaw.num, last);
        found.sigNum = vRaw.num;
        if (r?.entry.type === 1) {
          found.sigOffset = r.offset;
          found.sigEnd = r.end;
        }
      } else if (num !== undefined) {
        found.inline = true;
        const r = doc.resolve(num, last);
        if (r?.entry.type === 1 && r.declaredNum === num) {
          found.sigOffset = r.offset;
          found.sigEnd = r.end;
        }
      }
      out.signatures.push(found);
    } else {
      const widgetDicts = [field, ...widgets.map((w) => doc.dictAt({ kind: 'ref', num: w, gen: 0 }, last)).filter((d): d is PdfDict => !!d)];
      out.unsigned.push({ fieldName: name, fieldNum: num, hasAppearance: widgetDicts.some((w) => hasVisibleAppearance(doc, w, last)) });
    }
  };
  const fields = doc.deref(acroForm?.map.get('Fields'), last);
  if (Array.isArray(fields)) for (const f of fields) walk(f, '', undefined, 0);
  // Raw scan: every dictionary with a /ByteRange that no field reached.
  const rawScan = () => {
    const known = new Set(out.signatures.map((s) => s.sigOffset).filter((x) => x !== undefined));
    const found: FoundSignature[] = [];
    for (let p = doc.indexOf('/ByteRange'); p >= 0; p = doc.indexOf('/ByteRange', p + 10)) {
      const body = doc.bodyBefore(p);
      if (!body || known.has(body.offset)) continue;
      const obj = doc.objectAt(body.offset, last);
      if (!obj) {
        // An object the reader refused, holding this /ByteRange: a malformed signature, not nothing.
        const s = salvageSignatureAt(doc, body.offset);
        if (s && s.end > p) {
          known.add(body.offset);
          found.push(fromSalvage(s, null, undefined, true));
          rememberSalvaged(doc, s);
        }
        continue;
      }
      if (obj.end < p || !isDict(obj.value) || !obj.value.map.has('ByteRange')) continue;
      known.add(body.offset);
      // An older version of an object number that a later revision redefined is history, not an orphan.
      const current = doc.entryAt(obj.num, last);
      if (current && !(current.entry.type === 1 && current.entry.offset === body.offset)) {
        const cur = doc.resolve(obj.num, last);
        if (cur?.offset !== body.offset) continue;
      }
      found.push({ fieldName: null, sigDict: obj.value, sigNum: obj.num, sigOffset: obj.offset, sigEnd: obj.end, orphaned: true });
    }
    return found;
  };
  let orphans = rawScan();
  if (orphans.length > 0) {
    // Only then walk the pages (costly on long documents) for signature widgets the AcroForm does not list.
    forEachPage(doc, last, (page) => {
      const annots = doc.deref(page.map.get('Annots'), last);
      if (!Array.isArray(annots)) return;
      for (const a of annots) {
        if (!isRef(a) || seen.has(a.num)) continue;
        const w = doc.dictAt(a, last);
        if (!w || !isName(w.map.get('Subtype'), 'Widget')) continue;
        const parentRef = w.map.get('Parent');
        const parent = doc.dictAt(parentRef, last);
        const isSig = isName(w.map.get('FT'), 'Sig') || isName(parent?.map.get('FT'), 'Sig');
        if (!isSig) continue;
        if (!w.map.has('T') && isRef(parentRef)) {
          if (!seen.has(parentRef.num)) walk(parentRef, '', undefined, 0);
        } else walk(a, '', undefined, 0);
      }
    });

    orphans = rawScan();
  }
  out.signatures.push(...orphans);
  if (out.signatures.length > MAX_SIGNATURES) {
    throw new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The PDF has ${out.signatures.length} signatures, more than the ${MAX_SIGNATURES} the verifier checks in one document`,
    );
  }
  out.signatures.sort((a, b) => (a.sigOffset ?? 0) - (b.sigOffset ?? 0));
  return out;
}

/** A widget whose normal appearance draws something in a non-empty rectangle and is not hidden. */
export function hasVisibleAppearance(doc: PdfDocument, widget: PdfDict, rev: number): boolean {
  const flags = doc.deref(widget.map.get('F'), rev);
  if (typeof flags === 'number' && (flags & 0b10 || flags & 0b100000)) return false; // Hidden, NoView
  const rect = doc.deref(widget.map.get('Rect'), rev);
  if (!Array.isArray(rect) || rect.length !== 4) return false;
  const [x1, y1, x2, y2] = rect.map((x) => (typeof x === 'number' ? x : 0)) as [number, number, number, number];
  if (Math.abs(x2 - x1) < 1 || Math.abs(y2 - y1) < 1) return false;
  const ap = doc.dictAt(widget.map.get('AP'), rev);
  const n = doc.deref(ap?.map.get('N'), rev);
  if (isDict(n)) {
    // Appearance states: any non-empty state counts.
    return [...n.map.values()].some((s) => {
      const st = doc.deref(s, rev);
      return isStream(st) && st.dataEnd > st.dataStart;
    });
  }
  return isStream(n) && n.dataEnd > n.dataStart;
}

export interface ByteRangeCheck {
  byteRange: number[];
  coverage: Coverage;
  /** FORMAT_FAILURE reasons (USF, SWA, malformed). */
  formatErrors: string[];
  /** Revision whose end the signed range reaches (ENTIRE_*), else the one holding the dictionary. */
  signedRevision: number;
  contents?: PdfString;
}

const MAX_CMS_BYTES = 4 * 1024 * 1024;

/**
 * Signature wrapping keeps the original signature dictionary's bytes around (SWA moves it; the CCS 2019 paper's
 * "duplicated ByteRange"): a `/ByteRange` token inside the signed range that is not part of any signature
 * dictionary the reader found.
 */
function strayByteRanges(doc: PdfDocument, sig: FoundSignature, to: number, known: Array<[number, number]>): number[] {
  const out: number[] = [];
  for (const p of byteRangesOutside(doc, known)) {
    if (p >= to || out.length >= 5) break;
    if (sig.sigOffset !== undefined && sig.sigEnd !== undefined && p >= sig.sigOffset && p < sig.sigEnd) continue;
    out.push(p);
  }
  return out;
}

const outsideCache = new WeakMap<PdfDocument, { known: Array<[number, number]>; positions: number[] }>();

/**
 * Every `/ByteRange [` array token outside all known signature bodies, in file order. Computed once per
 * document: scanning the file (and every known body) again for each signature made the check quadratic in
 * the number of signatures.
 */
function byteRangesOutside(doc: PdfDocument, known: Array<[number, number]>): number[] {
  const hit = outsideCache.get(doc);
  if (hit && hit.known === known) return hit.positions;
  const sorted = [...known, ...(salvagedBodies.get(doc) ?? new Map<number, number>())].sort((a, b) => a[0] - b[0]);
  // Bodies may nest or overlap: the running maximum of their ends answers "is p inside one starting before it".
  const maxEnd: number[] = [];
  sorted.forEach(([, e], i) => maxEnd.push(Math.max(e, i > 0 ? maxEnd[i - 1]! : -1)));
  const inside = (p: number) => {
    let lo = 0;
    let hi = sorted.length - 1;
    let idx = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]![0] <= p) {
        idx = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return idx >= 0 && maxEnd[idx]! > p;
  };
  const positions: number[] = [];
  for (let p = doc.indexOf('/ByteRange'); p >= 0; p = doc.indexOf('/ByteRange', p + 10)) {
    if (!/^\/ByteRange\s*\[\s*\d/.test(doc.latin1(p, p + 24))) continue; // an array, not prose about one
    if (!inside(p)) positions.push(p);
  }
  outsideCache.set(doc, { known, positions });
  return positions;
}

/** A value as a short token for a message: numbers as written, others by kind. */
function describeValue(v: PdfValue): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (Array.isArray(v)) return '[…]';
  if (v.kind === 'name') return `/${v.name.slice(0, 24)}`;
  if (v.kind === 'ref') return `${v.num} ${v.gen} R`;
  return `(${v.kind})`;
}

export function checkByteRange(doc: PdfDocument, sig: FoundSignature, known: Array<[number, number]> = []): ByteRangeCheck {
  const errors: string[] = [];
  const len = doc.buf.length;
  const holder = sig.sigOffset !== undefined ? doc.revisionOf(sig.sigOffset) : doc.last;
  if (sig.salvaged) {
    // The reader refused the dictionary: name what is wrong; nothing is hashed over a range it cannot read.
    const text = sig.salvaged.byteRangeText;
    const tokens = text ? text.split(' ') : [];
    const result: ByteRangeCheck = {
      // Positions matter ([a, b, c, d]): with a token that is no number, none is reported.
      byteRange: tokens.every((t) => PDF_NUMBER.test(t)) ? tokens.map(Number) : [],
      coverage: 'UNCLEAR',
      formatErrors: errors,
      signedRevision: holder,
    };
    if (text === undefined) {
      errors.push(
        `SIGNATURE_DICTIONARY_MALFORMED: the signature dictionary (object ${sig.sigNum}) cannot be read: its /ByteRange array is not closed`,
      );
      return result;
    }
    const bad = tokens.filter((t) => !PDF_NUMBER.test(t));
    errors.push(
      `BYTE_RANGE_MALFORMED: /ByteRange must be 4 non-negative integers, found [${text}]` +
        (bad.length
          ? ` (${bad.map((t) => `"${t.slice(0, 24)}"`).join(', ')} ${bad.length === 1 ? 'is not a PDF number' : 'are not PDF numbers'})`
          : ''),
    );
    if (sig.salvaged.stub) {
      errors.push(`SIGNATURE_DICTIONARY_MALFORMED: the signature dictionary (object ${sig.sigNum}) cannot be read beyond its /ByteRange`);
    }
    const contents = sig.sigDict.map.get('Contents');
    if (isString(contents)) result.contents = contents;
    return result;
  }
  const brRaw = doc.deref(sig.sigDict.map.get('ByteRange'), doc.last);
  const br = Array.isArray(brRaw) ? brRaw : [];
  const nums = br.filter((x): x is number => typeof x === 'number');
  const result: ByteRangeCheck = { byteRange: nums, coverage: 'UNCLEAR', formatErrors: errors, signedRevision: holder };
  if (sig.sigDict.duplicateKeys?.length) errors.push(`DUPLICATE_KEYS: the signature dictionary repeats ${sig.sigDict.duplicateKeys.join(', ')}`);
  const contentsRaw = sig.sigDict.map.get('Contents');
  if (contentsRaw === undefined) errors.push('CONTENTS_MISSING: the signature dictionary has no /Contents');
  else if (contentsRaw === null) errors.push('CONTENTS_NULL: /Contents is null');
  else if (!isString(contentsRaw)) errors.push('CONTENTS_NOT_DIRECT: /Contents is not a direct string');
  else {
    result.contents = contentsRaw;
    if (!contentsRaw.hex) errors.push('CONTENTS_NOT_HEX: /Contents is a literal string, not <hex>');
    if (contentsRaw.bytes.length === 0 || contentsRaw.bytes.every((b) => b === 0))
      errors.push('CONTENTS_EMPTY: /Contents holds no signature (empty or all zero)');
    if (contentsRaw.bytes.length > MAX_CMS_BYTES) errors.push('CONTENTS_TOO_LARGE: /Contents exceeds 4 MB');
  }
  if (brRaw === undefined) {
    errors.push('BYTE_RANGE_MISSING: the signature dictionary has no /ByteRange');
    return result;
  }
  if (br.length !== 4 || nums.length !== 4 || !nums.every((n) => Number.isInteger(n) && n >= 0)) {
    const shown = br.slice(0, 8).map(describeValue);
    errors.push(`BYTE_RANGE_MALFORMED: /ByteRange must be 4 non-negative integers, found [${shown.join(' ')}${br.length > 8 ? ' …' : ''}]`);
    return result;
  }
  const [a, b, c, d] = nums as [number, number, number, number];
  if (a !== 0) errors.push('BYTE_RANGE_NOT_FROM_START: the signed range does not start at byte 0');
  if (c < a + b) errors.push('BYTE_RANGE_OVERLAP: the two ranges overlap');
  if (c + d > len) errors.push(`BYTE_RANGE_PAST_END: the signed range ends at ${c + d}, after the end of the file (${len})`);
  const contents = result.contents;
  if (contents && (contents.start !== a + b || contents.end !== c)) {
    if (c - (a + b) > contents.end - contents.start) {
      errors.push(
        `SIGNATURE_WRAPPING: the unsigned gap [${a + b}, ${c}) is ${c - a - b} bytes, larger than the /Contents string (${contents.end - contents.start} bytes)`,
      );
    } else {
      errors.push(`BYTE_RANGE_GAP_MISMATCH: the unsigned gap [${a + b}, ${c}) is not the /Contents string [${contents.start}, ${contents.end})`);
    }
  }
  if (sig.sigOffset !== undefined && sig.sigEnd !== undefined && (sig.sigOffset >= a + b || sig.sigEnd > c + d)) {
    errors.push('SIGNATURE_DICTIONARY_NOT_SIGNED: the signature dictionary lies outside the signed bytes');
  }
  if (sig.sigOffset === undefined && !sig.orphaned && sig.sigNum !== undefined) {
    errors.push('SIGNATURE_DICTIONARY_COMPRESSED: the signature dictionary is inside an object stream');
  }
  const stray = strayByteRanges(doc, sig, c + d, known);
  if (stray.length) {
    errors.push(
      `DUPLICATED_BYTE_RANGE: another /ByteRange at offset ${stray.join(', ')} inside the bytes of this signature belongs to no signature dictionary`,
    );
  }
  if (errors.some((e) => /^(BYTE_RANGE|SIGNATURE_WRAPPING|SIGNATURE_DICTIONARY|DUPLICATED)/.test(e))) return result;
  const end = c + d;
  if (end === len) {
    result.coverage = 'ENTIRE_FILE';
    result.signedRevision = doc.last;
    return result;
  }
  const rev = doc.revisions.find((r) => r.end >= end && r.end - end <= 2 && /^[\r\n]*$/.test(doc.latin1(end, r.end)));
  if (rev) {
    result.coverage = 'ENTIRE_REVISION';
    result.signedRevision = rev.index;
  } else {
    result.coverage = 'PARTIAL';
    errors.push(`PARTIAL_COVERAGE: the signed range ends at ${end}, which is not the end of a revision`);
  }
  return result;
}

export interface CryptoCheck {
  cms: CmsResult;
  digestMatches: boolean;
  signatureValid: boolean;
}

/**
 * Bytes hashed per document for ByteRange digests. Every signature hashes what it covers, so n signatures over
 * a whole file cost n times its length: an honest document signed a few dozen times stays well below, a
 * file of hundreds of signatures each claiming everything does not.
 */
export const MAX_HASHED_BYTES = 2 * 1024 * 1024 * 1024;
const hashedBytes = new WeakMap<PdfDocument, number>();

/** Hashes the ByteRange ranges (when they lie inside the file) with a digest algorithm. */
export function rangeDigest(doc: PdfDocument, br: number[], alg: string): Uint8Array | undefined {
  if (!createDigest(alg) || br.length % 2 !== 0) return undefined;
  let total = 0;
  for (let i = 0; i < br.length; i += 2) {
    const s = br[i]!;
    const n = br[i + 1]!;
    if (!Number.isInteger(s) || !Number.isInteger(n) || s < 0 || n < 0 || s + n > doc.buf.length) return undefined;
    total += n;
  }
  const spent = (hashedBytes.get(doc) ?? 0) + total;
  if (spent > MAX_HASHED_BYTES) {
    throw new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The PDF's signatures cover more than ${MAX_HASHED_BYTES / 1024 / 1024} MB of bytes in total; too many signatures over too large a file`,
    );
  }
  hashedBytes.set(doc, spent);
  let hash = createDigest(alg)!;
  let from = 0;
  // Every signature's first range starts at byte 0 and later signatures' first ranges extend earlier ones (the
  // bytes before each /Contents): the hash state at the end of the longest first range seen so far is kept per
  // algorithm and continued, so a 100-page file signed three times is not hashed from the start three times.
  // XOFs (SHAKE) are left out: a copied state's output length is not the one asked for.
  const prefixes = nodeHash(alg)?.startsWith('shake') ? undefined : (prefixStates.get(doc) ?? prefixStates.set(doc, new Map()).get(doc)!);
  if (prefixes && br[0] === 0) {
    const kept = prefixes.get(alg);
    if (kept && kept.end <= br[1]!) {
      hash = kept.hash.copy();
      from = kept.end;
    }
    hash.update(doc.buf.subarray(from, br[1]!));
    if (!kept || kept.end <= br[1]!) prefixes.set(alg, { end: br[1]!, hash: hash.copy() });
    from = 2;
  } else from = 0;
  for (let i = from; i < br.length; i += 2) hash.update(doc.buf.subarray(br[i]!, br[i]! + br[i + 1]!));
  return hash.digest();
}
const prefixStates = new WeakMap<PdfDocument, Map<string, { end: number; hash: Hash }>>();

/**
 * SHA-256 of the whole file (the answer's `document.sha256`), hex. The longest SHA-256 prefix state that the
 * ByteRange digests kept (the bytes before the last such signature's /Contents) is a prefix of the file too:
 * only the rest is hashed.
 */
export function fileSha256Hex(doc: PdfDocument): string {
  const kept = prefixStates.get(doc)?.get('SHA-256');
  const from = kept && kept.end <= doc.buf.length ? kept.end : 0;
  const hash = from > 0 ? kept!.hash.copy() : createDigest('SHA-256')!;
  return hash.update(doc.buf.subarray(from)).digest('hex');
}

/**
 * CMS bytes parsed per document. One signature's /Contents is capped at MAX_CMS_BYTES, but many fields can
 * point at the same large signature dictionary, and each would be parsed again.
 */
export const MAX_CMS_BYTES_PER_DOCUMENT = 32 * 1024 * 1024;
const cmsBytes = new WeakMap<PdfDocument, number>();

export function checkCrypto(doc: PdfDocument, subFilter: string | undefined, br: ByteRangeCheck): CryptoCheck | undefined {
  const contents = br.contents;
  if (!contents || contents.bytes.length === 0 || contents.bytes.length > MAX_CMS_BYTES || contents.bytes.every((b) => b === 0)) return undefined;
  const parsed = (cmsBytes.get(doc) ?? 0) + contents.bytes.length;
  if (parsed > MAX_CMS_BYTES_PER_DOCUMENT) {
    throw new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The PDF's signatures carry more than ${MAX_CMS_BYTES_PER_DOCUMENT / 1024 / 1024} MB of CMS data in total`,
    );
  }
  cmsBytes.set(doc, parsed);
  const digestOf = (alg: string) => rangeDigest(doc, br.byteRange, alg);
  const cms = verifyCms(contents.bytes, digestOf);
  let digestMatches = cms.digestMatches;
  if (subFilter === 'ETSI.RFC3161') {
    // A document timestamp: the token's message imprint is the hash of the ranges.
    const tst = cms.tstInfo;
    const expected = tst?.imprintAlgorithm ? digestOf(tst.imprintAlgorithm) : undefined;
    digestMatches = !!tst && !!expected && Buffer.compare(Buffer.from(tst.imprint), Buffer.from(expected)) === 0;
  } else if (subFilter === 'adbe.pkcs7.sha1') {
    const expected = digestOf('SHA-1');
    digestMatches =
      cms.digestMatches &&
      !!cms.encapsulatedContent &&
      !!expected &&
      Buffer.compare(Buffer.from(cms.encapsulatedContent), Buffer.from(expected)) === 0;
    cms.warnings.push('WEAK_DIGEST_ALGORITHM: adbe.pkcs7.sha1 signs a SHA-1 digest');
  } else if (cms.encapsulatedContent && cms.encapsulatedContent.length > 0) {
    cms.errors.push('the CMS of a detached PDF signature encapsulates content');
    digestMatches = false;
  }
  return { cms, digestMatches, signatureValid: cms.signatureValid };
}

/** A PDF date string value (a signature's /M) → Date, through src/pdf's one codec; undefined for anything else. */
export function pdfDateOf(v: PdfValue | undefined): Date | undefined {
  return isString(v) ? parsePdfDate(decodePdfText(v.bytes)) : undefined;
}

const MAX_PAGES = 100_000;

/** Visits the page dictionaries of revision `rev` (bounded depth and count, loops ignored). */
export function forEachPage(doc: PdfDocument, rev: number, visit: (page: PdfDict, num?: number) => void): void {
  const seen = new Set<number>();
  let count = 0;
  const walk = (v: PdfValue | undefined, depth: number) => {
    if (depth > 64 || count > MAX_PAGES) return;
    if (isRef(v)) {
      if (seen.has(v.num)) return;
      seen.add(v.num);
    }
    const node = doc.dictAt(v, rev);
    if (!node) return;
    const kids = doc.deref(node.map.get('Kids'), rev);
    if (Array.isArray(kids) && !isName(node.map.get('Type'), 'Page')) {
      for (const k of kids) walk(k, depth + 1);
      return;
    }
    count++;
    visit(node, isRef(v) ? v.num : undefined);
  };
  walk(doc.catalogAt(rev)?.map.get('Pages'), 0);
}
