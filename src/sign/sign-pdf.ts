/**
 * Seals a PDF: appends, in one incremental update, the audit pages, the audit-trail.json attachment, an
 * invisible signature field and its signature dictionary, then fills /ByteRange and /Contents with a
 * CAdES detached signature (PAdES B-B, or B-T with a TSA) covering the whole file. The input bytes stay
 * untouched, so signatures already in the document remain valid.
 *
 * Two object models, on purpose. The existing document is *read* by src/pdf's bounded forensic reader only
 * (pdf-view.ts): its revisions, the last xref section and its kind, the trailer's /Size /Root /Info /ID,
 * encryption, object offsets — everything the incremental update is chained to — and the update is written
 * by src/pdf's one incremental writer. @cantoo/pdf-lib stays as the *authoring* library: it gets a document
 * built from the reader's objects in force (never the caller's raw bytes, see src/pdf/authoring.ts) and used to edit the
 * catalog, page tree, AcroForm and name tree in memory, to lay out and draw the audit pages (fonts, text,
 * content streams) and to serialize the new objects. Writing a layout engine and font embedding for src/pdf
 * would duplicate a maintained library for no gain in what is read from hostile input. pdf-lib also
 * rewrites a document whose xref cannot be chained to (the repair path), which the reader then re-reads.
 * The PDF syntax of the update — object framing, the signature dictionary's placeholders, the xref
 * section — is written by src/pdf; this file decides what changes. The sealed result carries what the
 * update wrote (`chain`), so B-LT/B-LTA append theirs without reading the output again (src/pdf/xref-chain.ts).
 */
import crypto from 'node:crypto';
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString, type PDFDocument, type PDFObject } from '../pdf/index.js';
import { FolioError } from '../errors.js';
import type { SigningIdentity } from './identity-types.js';
import { renderAuditPages } from './audit-page.js';
import { buildSignedData, documentDigestName, estimateCmsSize, signDigest } from './cms.js';
import {
  AUDIT_TRAIL_FILE_NAME,
  afterUpdate,
  appendIncrementalUpdate,
  authoredObjects,
  decodePdfText,
  fillContents,
  formatPdfDate,
  lastXrefOf,
  placeByteRange,
  scanObjects,
  signatureDictionary,
  type AuditRecord,
  type LastXref,
  type PdfDocument,
  type PdfRef,
  type UpdateBase,
} from '../pdf/index.js';
import { requestSignatureTimestamp, TimestampError } from './tsa.js';
import { openForSigning } from './pdf-view.js';

export interface SealOptions {
  identity: SigningIdentity;
  /** Render the audit pages (the attachment is always added). */
  auditPages: boolean;
  tsaUrl?: string;
  tsaOptional: boolean;
  /** Called when the TSA failed and TSA_OPTIONAL let the signature go out without a timestamp. */
  onTimestampSkipped?: (reason: string) => void;
}

export interface SealResult {
  pdf: Uint8Array;
  fieldName: string;
  timestamped: boolean;
  /** The signature's /ByteRange, and the timestamp token when there is one (B-LT adds its TSA's chain). */
  byteRange: number[];
  token?: Uint8Array;
  auditPageCount: number;
  /**
   * What a further update of the same request (B-LT, B-LTA) chains to: the objects and the xref section this
   * one wrote, as it wrote them (asked for only by those levels).
   */
  chain: () => UpdateBase;
}

/** Loaded, checked and (if needed) repaired input, ready for sealing. */
export interface PreparedPdf {
  /** The PDF bytes the update is appended to (the input, or its repaired rewrite). */
  base: Uint8Array;
  last: LastXref;
  doc: PDFDocument;
  /** The bounded reader's view of `base`: objects the update leaves alone are looked up there afterwards. */
  reader: PdfDocument;
  repaired: boolean;
}

const MAX_TREE_NODES = 100_000;
/** Room for a timestamp token (TSA certificate chain included) in the /Contents placeholder. */
const TIMESTAMP_ROOM = 16_384;

function unprocessable(message: string, cause?: unknown): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', message, { cause });
}

/**
 * Loads the PDF and checks that an incremental update can be appended. A document whose cross-reference
 * information is broken is repaired by a full rewrite (there is no valid revision to append to).
 */
export async function preparePdf(bytes: Uint8Array): Promise<PreparedPdf> {
  // The caller sniffed the bytes once (src/sign/input-kind.ts); the bounded reader reads the document; pdf-lib gets a document built from what it read (see pdf-view.ts).
  // openForSigning refused an encrypted document (a trailer /Encrypt in any revision); the image has none.
  const opened = await openForSigning(bytes);
  let reader = opened.reader;
  let doc = opened.doc;
  if (!(doc.context.trailerInfo.Root instanceof PDFRef)) throw unprocessable('The PDF has no document catalog');
  let pageCount: number;
  try {
    pageCount = doc.getPageCount();
  } catch (e) {
    throw unprocessable('The PDF page tree is unreadable', e);
  }
  if (pageCount < 1) throw unprocessable('The PDF has no pages');
  if (docMdpPermission(doc) === 1) {
    throw unprocessable('The PDF is certified with "no changes allowed" (DocMDP P=1); signing it would invalidate its certification');
  }

  let base = bytes;
  // What the update is chained to comes from the bounded reader's parse of the document (src/pdf).
  let last = lastXrefOf(reader);
  let repaired = false;
  // A readable chain whose entries point at the wrong bytes is repaired too, unless the document is
  // already signed: a rewrite would break those signatures, while an appended update keeps them valid
  // (readers reconstruct the old table as they did before).
  const signed = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('/ByteRange');
  if (!last && signed) {
    // Rewriting would break the signatures already in the file: keep its bytes and append a complete
    // cross-reference table rebuilt by scanning (when the file has no object streams).
    last = scanObjects(reader);
    if (!last) throw unprocessable('The signed PDF has a broken cross-reference table that cannot be repaired without invalidating its signatures');
  } else if (!last || (!last.entriesValid && !signed)) {
    try {
      base = await doc.save({ useObjectStreams: false, updateFieldAppearances: false, addDefaultPage: false });
    } catch (e) {
      throw unprocessable('The PDF cross-reference table is broken and the file could not be repaired', e);
    }
    // pdf-lib's own rewrite, read back the same way as any input (once: the update chains to that read).
    const reopened = await openForSigning(base);
    last = lastXrefOf(reopened.reader);
    if (!last) throw unprocessable('The PDF cross-reference table is broken and the file could not be repaired');
    ({ doc, reader } = reopened);
    repaired = true;
  }
  return { base, last, doc, reader, repaired };
}

/** The DocMDP permission level of a certified document (1–3), if it is certified. */
function docMdpPermission(doc: PDFDocument): number | undefined {
  const perms = doc.catalog.lookup(PDFName.of('Perms'));
  if (!(perms instanceof PDFDict)) return undefined;
  const sig = perms.lookup(PDFName.of('DocMDP'));
  if (!(sig instanceof PDFDict)) return undefined;
  const refs = sig.lookup(PDFName.of('Reference'));
  if (!(refs instanceof PDFArray)) return 2; // certified without parameters: P defaults to 2
  for (let i = 0; i < refs.size(); i++) {
    const ref = refs.lookup(i);
    if (!(ref instanceof PDFDict)) continue;
    const params = ref.lookup(PDFName.of('TransformParams'));
    const p = params instanceof PDFDict ? params.lookup(PDFName.of('P')) : undefined;
    if (p instanceof PDFNumber) return p.asNumber();
  }
  return 2;
}

/** Tracks the objects of the original document that this update rewrites. */
class ChangeSet {
  readonly refs = new Map<number, PDFRef>();
  mark(ref: PDFRef | undefined): void {
    if (ref) this.refs.set(ref.objectNumber, ref);
  }
}

/**
 * Resolves `dict[key]` to an array or dictionary (as `is` tells) that can be changed in place: a direct one (the
 * dict is rewritten by the caller), an indirect one (its object is marked), or a new one set on the dict.
 */
function editable<T extends PDFArray | PDFDict>(
  doc: PDFDocument,
  dict: PDFDict,
  key: string,
  changes: ChangeSet,
  is: (o: unknown) => o is T,
  fresh: () => T,
): T {
  const raw = dict.get(PDFName.of(key));
  if (raw instanceof PDFRef) {
    const target = doc.context.lookup(raw);
    if (is(target)) {
      changes.mark(raw);
      return target;
    }
  } else if (is(raw)) {
    return raw;
  }
  const made = fresh();
  dict.set(PDFName.of(key), made);
  return made;
}

const editableArray = (doc: PDFDocument, dict: PDFDict, key: string, changes: ChangeSet): PDFArray =>
  editable(
    doc,
    dict,
    key,
    changes,
    (o): o is PDFArray => o instanceof PDFArray,
    () => doc.context.obj([]),
  );

const editableDict = (doc: PDFDocument, dict: PDFDict, key: string, changes: ChangeSet): PDFDict =>
  editable(
    doc,
    dict,
    key,
    changes,
    (o): o is PDFDict => o instanceof PDFDict,
    () => doc.context.obj({}),
  );

/** A string object's text (PDFDocEncoding or UTF-16/UTF-8 by its byte-order mark), through the one codec. */
function decodeText(obj: PDFObject | undefined): string | undefined {
  if (obj instanceof PDFString || obj instanceof PDFHexString) return decodePdfText(obj.asBytes());
  return undefined;
}

/** Collects the (name, value) pairs of a name tree, bounded. */
function nameTreeEntries(doc: PDFDocument, root: PDFObject | undefined): Array<[PDFObject, PDFObject]> {
  const out: Array<[PDFObject, PDFObject]> = [];
  const stack: Array<{ node: PDFObject | undefined; depth: number }> = [{ node: root, depth: 0 }];
  let visited = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const dict = node instanceof PDFRef ? doc.context.lookup(node) : node;
    if (!(dict instanceof PDFDict) || depth > 32 || ++visited > MAX_TREE_NODES) continue;
    const names = dict.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let i = 0; i + 1 < names.size(); i += 2) out.push([names.get(i), names.get(i + 1)]);
    }
    const kids = dict.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) {
      for (let i = kids.size() - 1; i >= 0; i--) stack.push({ node: kids.get(i), depth: depth + 1 });
    }
  }
  return out;
}

/** Top-level field names already in the AcroForm, to pick a unique signature field name. */
function existingFieldNames(doc: PDFDocument, fields: PDFArray): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < Math.min(fields.size(), MAX_TREE_NODES); i++) {
    const field = fields.lookup(i);
    if (field instanceof PDFDict) {
      const t = decodeText(field.lookup(PDFName.of('T')));
      if (t !== undefined) names.add(t);
    }
  }
  return names;
}

/** The last page's visible size (MediaBox, with /Rotate applied). */
function lastPageSize(doc: PDFDocument): { width: number; height: number } {
  const page = doc.getPage(doc.getPageCount() - 1);
  let { width, height } = page.getSize();
  const rotation = ((page.getRotation().angle % 360) + 360) % 360;
  if (rotation === 90 || rotation === 270) [width, height] = [height, width];
  if (!Number.isFinite(width) || !Number.isFinite(height) || width <= 0 || height <= 0) return { width: 595.28, height: 841.89 };
  return { width: Math.abs(width), height: Math.abs(height) };
}

function embedAuditFile(doc: PDFDocument, catalog: PDFDict, json: Uint8Array, when: Date, changes: ChangeSet): void {
  const context = doc.context;
  const fileStream = context.flateStream(json, {
    Type: 'EmbeddedFile',
    Subtype: 'application/json',
    Params: {
      Size: json.length,
      ModDate: PDFString.of(formatPdfDate(when)),
      CheckSum: PDFHexString.of(crypto.createHash('md5').update(json).digest('hex')),
    },
  });
  const fileRef = context.register(fileStream);
  const filespec = context.obj({
    Type: 'Filespec',
    F: PDFString.of(AUDIT_TRAIL_FILE_NAME),
    UF: PDFHexString.fromText(AUDIT_TRAIL_FILE_NAME),
    EF: { F: fileRef, UF: fileRef },
    Desc: PDFHexString.fromText('Folio audit trail of this signature (JSON)'),
    AFRelationship: 'Data',
  });
  const filespecRef = context.register(filespec);

  // /Names /EmbeddedFiles: a new leaf holding the existing entries plus ours, sorted by name. An older
  // audit-trail.json (an earlier Folio signature) is replaced in the current revision; it stays in its own.
  const names = editableDict(doc, catalog, 'Names', changes);
  const entries = nameTreeEntries(doc, names.get(PDFName.of('EmbeddedFiles'))).filter(([k]) => decodeText(k) !== AUDIT_TRAIL_FILE_NAME);
  entries.push([PDFString.of(AUDIT_TRAIL_FILE_NAME), filespecRef]);
  const key = (k: PDFObject) => (k instanceof PDFString || k instanceof PDFHexString ? Buffer.from(k.asBytes()) : Buffer.alloc(0));
  entries.sort((a, b) => Buffer.compare(key(a[0]), key(b[0])));
  const leaf = context.obj({});
  leaf.set(PDFName.of('Names'), context.obj(entries.flat()));
  names.set(PDFName.of('EmbeddedFiles'), context.register(leaf));

  // PDF 2.0 / PDF/A-3 associated file on the catalog.
  editableArray(doc, catalog, 'AF', changes).push(filespecRef);
}

/**
 * Appends audit pages, attachment and signature to a prepared PDF. `record` is embedded as is; its
 * pdfSha256/pdfLength must describe `prepared.base`.
 */
export async function sealPdf(prepared: PreparedPdf, record: AuditRecord, reason: string, opts: SealOptions): Promise<SealResult> {
  const { doc, base, last } = prepared;
  const context = doc.context;
  const changes = new ChangeSet();
  const rootRef = context.trailerInfo.Root as PDFRef;
  const catalog = context.lookup(rootRef);
  if (!(catalog instanceof PDFDict)) throw unprocessable('The PDF document catalog is not a dictionary');
  changes.mark(rootRef);

  // New objects are numbered after everything the original declares, free entries included.
  const originalLargest = Math.max(context.largestObjectNumber, last.size - 1);
  context.largestObjectNumber = originalLargest;
  const signedAt = new Date(record.signedAt);

  // Audit pages, linked at the end of the root page tree node.
  let lastPageRef: PDFRef;
  let auditPageCount = 0;
  if (opts.auditPages) {
    const pagesRef = catalog.get(PDFName.of('Pages'));
    const pagesDict = pagesRef instanceof PDFRef ? context.lookup(pagesRef) : undefined;
    if (!(pagesRef instanceof PDFRef) || !(pagesDict instanceof PDFDict)) throw unprocessable('The PDF page tree is unreadable');
    const pages = await renderAuditPages(doc, record, lastPageSize(doc));
    const kids = editableArray(doc, pagesDict, 'Kids', changes);
    for (const page of pages) {
      page.node.set(PDFName.of('Parent'), pagesRef);
      // Rotate and CropBox are inheritable: pin them so a rotated or cropped page tree leaves ours alone.
      page.node.set(PDFName.of('Rotate'), PDFNumber.of(0));
      page.node.set(PDFName.of('CropBox'), page.node.get(PDFName.of('MediaBox'))!);
      kids.push(page.ref);
    }
    const count = pagesDict.lookup(PDFName.of('Count'));
    pagesDict.set(PDFName.of('Count'), PDFNumber.of((count instanceof PDFNumber ? count.asNumber() : doc.getPageCount()) + pages.length));
    changes.mark(pagesRef);
    for (const font of doc['fonts'] as Array<{ embed(): Promise<void> }>) await font.embed();
    lastPageRef = pages[pages.length - 1]!.ref;
    auditPageCount = pages.length;
  } else {
    lastPageRef = doc.getPage(doc.getPageCount() - 1).ref;
  }

  embedAuditFile(doc, catalog, Buffer.from(JSON.stringify(record, null, 2), 'utf8'), signedAt, changes);

  // Invisible signature field (merged field and widget) on the last page.
  const acroForm = editableDict(doc, catalog, 'AcroForm', changes);
  const fields = editableArray(doc, acroForm, 'Fields', changes);
  const taken = existingFieldNames(doc, fields);
  let n = 1;
  while (taken.has(`Folio-Signature-${n}`)) n++;
  const fieldName = `Folio-Signature-${n}`;
  acroForm.set(PDFName.of('SigFlags'), PDFNumber.of(3));
  const sigRef = context.nextRef();
  const widget = context.obj({
    Type: 'Annot',
    Subtype: 'Widget',
    FT: 'Sig',
    T: PDFString.of(fieldName),
    V: sigRef,
    F: 132, // Print | Locked
    Rect: [0, 0, 0, 0],
    P: lastPageRef,
  });
  const widgetRef = context.register(widget);
  fields.push(widgetRef);
  const lastPage = context.lookup(lastPageRef);
  if (!(lastPage instanceof PDFDict)) throw unprocessable('The last page of the PDF is not a dictionary');
  editableArray(doc, lastPage, 'Annots', changes).push(widgetRef);
  if (lastPageRef.objectNumber <= originalLargest) changes.mark(lastPageRef);

  // Everything new plus the rewritten originals, in object-number order; the signature goes last.
  const objects = authoredObjects(doc, originalLargest, new Set(changes.refs.keys()), sigRef.objectNumber);

  // The trailer carries on what the reader found in force (/Root, /Info, the first /ID), with a new /ID[1].
  const newId = crypto.randomBytes(16).toString('hex');
  const root: PdfRef = last.root ?? { kind: 'ref', num: rootRef.objectNumber, gen: rootRef.generationNumber };
  const ref = (r: { num: number; gen: number }) => `${r.num} ${r.gen} R`;
  const trailer = {
    root: ref(root),
    info: last.info ? ref(last.info) : undefined,
    id: [last.firstId ?? newId, newId] as [string, string],
  };
  const highest = context.largestObjectNumber;
  const size = highest + 1 + (last.kind === 'stream' ? 1 : 0);

  let contentsBytes = estimateCmsSize(opts.identity) + (opts.tsaUrl ? TIMESTAMP_ROOM : 0);
  for (let attempt = 0; attempt < 2; attempt++) {
    const sig = signatureDictionary(sigRef.objectNumber, { contentsBytes, signedAt, name: record.signer.name, reason });
    const update = appendIncrementalUpdate(
      base,
      last,
      [...objects, { objectNumber: sigRef.objectNumber, generation: 0, bytes: sig.bytes }],
      trailer,
      size,
    );
    const out = update.bytes;
    const placed = placeByteRange(out, update.offsets.get(sigRef.objectNumber)!, sig);

    // The digest follows the key (SHA-256; SHA-384/512 for P-384/P-521); the signer may be a token (src/sign/signer).
    const digest = crypto
      .createHash(documentDigestName(opts.identity))
      .update(out.subarray(0, placed.contentsStart))
      .update(out.subarray(placed.contentsEnd))
      .digest();
    const signer = await signDigest(opts.identity, digest);
    let token: Uint8Array | undefined;
    if (opts.tsaUrl) {
      try {
        token = (await requestSignatureTimestamp(opts.tsaUrl, signer.signature)).token;
      } catch (e) {
        const why = e instanceof TimestampError ? e.message : 'unexpected error';
        if (!opts.tsaOptional) {
          throw new FolioError(
            'SERVICE_UNAVAILABLE',
            `The document was not signed: the timestamp authority failed (${why}). Retry later, or let the operator set TSA_OPTIONAL=true to sign without a timestamp.`,
            { retryAfter: 30, cause: e },
          );
        }
        opts.onTimestampSkipped?.(why);
      }
    }
    const cms = buildSignedData(opts.identity, signer, token);
    if (!fillContents(out, placed, cms)) {
      contentsBytes = cms.length + 2048; // e.g. an unusually large timestamp token: sign again with room
      continue;
    }
    return {
      pdf: out,
      fieldName,
      timestamped: token !== undefined,
      auditPageCount,
      byteRange: placed.byteRange,
      ...(token ? { token } : {}),
      chain: () =>
        afterUpdate({ doc: prepared.reader, rev: prepared.reader.last, last }, update, {
          size,
          root,
          ...(last.info ? { info: last.info } : {}),
          firstId: trailer.id[0],
        }),
    };
  }
  throw new Error('the signature did not fit its placeholder');
}
