/**
 * Chaining incremental updates within one request without reading the output back. The signature, the
 * B-LT DSS and the B-LTA document timestamp are three updates in a row; each used to be followed by a full
 * read of the document so far (every object header scanned, every revision's xref read again, the trailer
 * found again) just to learn what its writer had written a moment before. The writer knows it: where each
 * object went, where its xref section starts, the /Size and the trailer it wrote. So the next update
 * chains to that section directly (`chainedXref`), and looks objects up in `AppendedDocument`: the ones the
 * update wrote are parsed from their own bytes (only those that are asked for: the catalog, the AcroForm, a
 * page), every other one comes from the reader that read the input. The input is read once.
 */
import { FolioError } from '../errors.js';
import { decodeStream } from './filters.js';
import {
  dictOf,
  isRef,
  parseIndirectAt,
  PdfSyntaxError,
  type IndirectObject,
  type PdfDict,
  type PdfRef,
  type PdfStream,
  type PdfValue,
} from './objects.js';
import type { IncrementalUpdate, LastXref } from './incremental.js';
import type { UpdateBase } from './dss.js';

/** The lookups an update makes of the document it extends: the reader's (`PdfDocument`), or an `AppendedDocument`. */
export interface ObjectLookup {
  readonly buf: Uint8Array;
  resolve(num: number, rev: number): { value: PdfValue } | undefined;
  deref(v: PdfValue | undefined, rev: number): PdfValue | undefined;
  dictAt(v: PdfValue | undefined, rev: number): PdfDict | undefined;
  decode(stream: PdfStream, max?: number): Uint8Array;
}

/** References followed per lookup, as the reader bounds them. */
const MAX_REF_HOPS = 32;
/** Decoded bytes for a stream an update wrote (the DSS's DER): far above any certificate or CRL Folio adds. */
const MAX_WRITTEN_STREAM_BYTES = 32 * 1024 * 1024;

/**
 * The document as of an update just appended: `buf` is the earlier document followed by the update, whose
 * objects start at `written` (object number → offset). Revision numbers passed in are ignored: it answers
 * as of its own last revision, the only one an update chains to.
 */
export class AppendedDocument implements ObjectLookup {
  private readonly parsed = new Map<number, IndirectObject | null>();

  constructor(
    private readonly before: ObjectLookup,
    private readonly beforeRev: number,
    readonly buf: Uint8Array,
    private readonly written: ReadonlyMap<number, number>,
  ) {}

  resolve(num: number): { value: PdfValue } | undefined {
    const at = this.written.get(num);
    if (at === undefined) return this.before.resolve(num, this.beforeRev);
    let obj = this.parsed.get(num);
    if (obj === undefined) {
      // A guard while parsing: a /Length that refers back to the stream itself resolves to nothing.
      this.parsed.set(num, null);
      try {
        obj = parseIndirectAt(this.buf, at, (r) => {
          const v = this.resolve(r.num)?.value;
          return typeof v === 'number' ? v : undefined;
        });
      } catch (e) {
        if (!(e instanceof PdfSyntaxError)) throw e;
        obj = null;
      }
      this.parsed.set(num, obj);
    }
    return obj ? { value: obj.value } : undefined;
  }

  deref(v: PdfValue | undefined): PdfValue | undefined {
    for (let hops = 0; isRef(v); hops++) {
      if (hops >= MAX_REF_HOPS) return undefined;
      v = this.resolve(v.num)?.value;
    }
    return v;
  }

  dictAt(v: PdfValue | undefined): PdfDict | undefined {
    return dictOf(this.deref(v));
  }

  /** A stream of the earlier document is decoded by its reader (and counted against its budget). */
  decode(stream: PdfStream, max = MAX_WRITTEN_STREAM_BYTES): Uint8Array {
    if (stream.dataEnd <= this.before.buf.length) return this.before.decode(stream, max);
    return decodeStream(this.buf, stream, Math.min(max, MAX_WRITTEN_STREAM_BYTES));
  }
}

/** What an update wrote, as its writer knows it. */
export interface WrittenUpdate {
  /** Where its cross-reference section (table or stream) starts. */
  xrefOffset: number;
  /** The trailer /Size it wrote. */
  size: number;
  /** The trailer's /Root, /Info and first /ID it wrote. */
  root: PdfRef;
  info?: PdfRef;
  firstId?: string;
}

/**
 * The section the next update chains to: the one just written, of the same kind as the section it followed
 * (a rebuilt table is a complete classic table), with entries that are exact by construction.
 */
export function chainedXref(previous: LastXref, written: WrittenUpdate): LastXref {
  return {
    offset: written.xrefOffset,
    kind: previous.kind === 'stream' ? 'stream' : 'table',
    size: written.size,
    entriesValid: true,
    root: written.root,
    ...(written.info ? { info: written.info } : {}),
    ...(written.firstId !== undefined ? { firstId: written.firstId } : {}),
  };
}

/**
 * The base the next update of the same request starts from, once `update` was appended to `before`: its
 * objects looked up without reading the output again, its xref section chained to as written.
 */
export function afterUpdate(
  before: Pick<UpdateBase, 'doc' | 'rev' | 'last'>,
  update: IncrementalUpdate,
  written: Omit<WrittenUpdate, 'xrefOffset'>,
): UpdateBase {
  const doc = new AppendedDocument(before.doc, before.rev, update.bytes, update.offsets);
  const catalog = doc.dictAt(written.root);
  if (!catalog) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The signed PDF cannot take a further incremental update (its catalog is unreadable)');
  return { doc, last: chainedXref(before.last, { ...written, xrefOffset: update.xrefOffset }), rev: 0, catalogRef: written.root, catalog };
}
