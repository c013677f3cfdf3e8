/**
 * The forensic PDF reader: finds every revision (each `%%EOF` that closes a `startxref`, plus trailing bytes
 * after the last one), reads each revision's own xref section (table, stream or hybrid) as a *delta*, and
 * resolves an object "as of" any revision by walking the deltas backwards. A revision whose xref is missing,
 * empty, broken or a copy of an earlier one is repaired from the object bodies found in its own bytes, so an
 * appended update cannot hide from the diff by breaking its xref (isa-3). Every oddity met on the way is
 * recorded as an anomaly with its revision, for the modification analysis to weigh.
 *
 * The first pass (object headers, revision boundaries) is in revisions.ts; the incremental writer
 * (incremental.ts) reads the document through this class too.
 *
 * Bounds: object nesting (MAX_NESTING), revisions per document, xref entries per document (and /W widths),
 * object-stream size and count, total decoded bytes (every inflate is capped while it runs), reference-chain
 * length, /Prev and object-stream recursion (none is followed: revisions are found from the bytes, and an
 * object stream must itself sit at a byte offset). Every pass over the file is linear: per-revision and
 * per-object lookups go through indexes, never a fresh scan of the bytes or of every body.
 */
import { FolioError } from '../errors.js';
import {
  Lexer,
  PdfSyntaxError,
  dictOf,
  isDict,
  isName,
  isRef,
  isStream,
  latin1,
  parseIndirectAt,
  type IndirectObject,
  type PdfDict,
  type PdfRef,
  type PdfStream,
  type PdfValue,
} from './objects.js';
import { decodeStream, StreamDecodeError } from './filters.js';
import { findRevisions, scanBodies, type Anomaly, type Body, type Revision, type XrefEntry } from './revisions.js';

export { MAX_REVISIONS, type Anomaly, type Revision, type XrefEntry, type XrefKind } from './revisions.js';

export interface ResolvedObject {
  num: number;
  value: PdfValue;
  entry: XrefEntry;
  /** The object number the body itself declares (differs from `num` in the hide attack). */
  declaredNum: number;
  offset?: number;
  end?: number;
}

/** Cross-reference entries read per document, all sections together (each costs a map entry). */
export const MAX_XREF_ENTRIES = 1_000_000;
const FREE: XrefEntry = Object.freeze({ type: 0, offset: 0, gen: 0, stream: 0, index: 0 });
/** Decoded bytes per document, all streams together (each inflate stops at what is left of it). */
export const MAX_DECODED_BYTES = 128 * 1024 * 1024;
export const MAX_OBJSTM_BYTES = 32 * 1024 * 1024;
const MAX_OBJSTM_COUNT = 100_000;
const MAX_REF_HOPS = 32;

interface ObjStm {
  data: Uint8Array;
  offsets: Array<{ num: number; off: number }>;
  first: number;
}

export class PdfDocument {
  /**
   * The file as a latin1 string, made on first use (callers that search the whole file with regular
   * expressions): the reader itself works on the bytes, as a string of a large file costs a copy of it.
   */
  get text(): string {
    return (this.textCache ??= Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.length).toString('latin1'));
  }
  private textCache?: string;
  /** The bytes as a Buffer (a view, no copy), for native searches. */
  private readonly view: Buffer;
  readonly revisions: Revision[];
  readonly anomalies: Anomaly[] = [];
  /** Every `num gen obj` header in the file, by offset. */
  readonly bodies: Body[];
  private readonly parsedAt = new Map<number, IndirectObject | null>();
  private readonly objStms = new Map<number, ObjStm | null>();
  private readonly anomalyKeys = new Set<string>();
  private decodedBytes = 0;
  private xrefEntryCount = 0;
  private resolving = 0;

  constructor(readonly buf: Uint8Array) {
    this.view = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
    this.bodies = scanBodies(buf);
    this.revisions = findRevisions(buf, (code, message, revision) => this.anomaly(code, message, revision));
    for (const rev of this.revisions) this.readXref(rev);
    this.ready = true;
  }

  /** Set once every revision's xref is read: indexes over the entries are only cached from then on. */
  private ready = false;

  get last(): number {
    return this.revisions.length - 1;
  }

  anomaly(code: string, message: string, revision?: number, object?: number): void {
    const key = `${code}|${revision}|${object}`;
    if (this.anomalyKeys.has(key)) return;
    this.anomalyKeys.add(key);
    this.anomalies.push({ code, message, revision, object });
  }

  private readonly claimedXrefs = new Set<number>();

  /**
   * Reads the xref sections of one revision: the one at its startxref and those reached through /Prev
   * until a section that an earlier revision already read (a linearized file keeps its first-page xref at
   * the start and the main one before the first %%EOF of the body, chained by /Prev).
   */
  private readXref(rev: Revision): void {
    const previous = this.revisions[rev.index - 1];
    let at = rev.startxref;
    let chainEnd: number | undefined | 'none';
    try {
      if (at === undefined || at >= this.buf.length) throw new PdfSyntaxError('startxref missing or past the end');
      if (this.claimedXrefs.has(at)) throw new PdfSyntaxError('startxref repeats an earlier revision');
      const visited = new Set<number>();
      for (let hop = 0; at !== undefined && !this.claimedXrefs.has(at) && !visited.has(at); hop++) {
        if (hop > 64) throw new PdfSyntaxError('xref /Prev chain too long');
        visited.add(at);
        const section = { ...rev, entries: new Map<number, XrefEntry>(), trailer: undefined as PdfDict | undefined };
        const lx = new Lexer(this.buf, at);
        if (lx.peekWord() === 'xref') {
          lx.readWord();
          this.readXrefTable(section, lx);
          const xs = section.trailer?.map.get('XRefStm');
          if (typeof xs === 'number') {
            this.readXrefStream(section, xs, false);
            if (hop === 0) rev.xref = 'hybrid';
          } else if (hop === 0) rev.xref = 'table';
        } else {
          this.readXrefStream(section, at, true);
          if (hop === 0) rev.xref = 'stream';
        }
        if (hop === 0) rev.trailer = section.trailer;
        // The nearest section wins over the ones it chains to.
        if (rev.entries.size === 0) rev.entries = section.entries;
        else for (const [n, e] of section.entries) if (!rev.entries.has(n)) rev.entries.set(n, e);
        const prev = section.trailer?.map.get('Prev');
        at = typeof prev === 'number' ? prev : undefined;
        chainEnd = at === undefined ? 'none' : at;
      }
      if (at !== undefined && visited.has(at)) rev.prevCycle = true;
      for (const v of visited) this.claimedXrefs.add(v);
      if (rev.entries.size === 0) rev.xref = 'empty';
    } catch (e) {
      if (!(e instanceof PdfSyntaxError || e instanceof StreamDecodeError)) throw e;
      rev.xref = 'broken';
      rev.entries.clear();
    }
    if (previous && rev.xref !== 'broken' && previous.xref !== 'broken' && previous.xref !== 'none' && chainEnd !== previous.startxref) {
      this.anomaly(
        chainEnd === 'none' ? 'NO_PREV' : 'PREV_MISMATCH',
        chainEnd === 'none'
          ? `revision ${rev.index + 1}'s trailer has no /Prev: an incremental update that hides its link to the signed revision`
          : `revision ${rev.index + 1}'s /Prev chain does not reach the previous revision's xref (${previous.startxref})`,
        rev.index,
      );
    }
    if (rev.xref === 'broken' || rev.xref === 'empty' || rev.xref === 'none') {
      rev.repaired = true;
      // Bodies are in offset order: only this revision's slice is visited.
      for (let i = this.firstBodyAtOrAfter(rev.start); i < this.bodies.length && this.bodies[i]!.offset < rev.end; i++) {
        const b = this.bodies[i]!;
        rev.entries.set(b.num, { type: 1, offset: b.offset, gen: b.gen, stream: 0, index: 0 });
      }
      if (rev.entries.size > 0 || rev.xref !== 'none' || this.revisions.length === 1) {
        this.anomaly(
          'XREF_REPAIRED',
          `revision ${rev.index + 1} has ${rev.xref === 'none' ? 'no' : `a ${rev.xref}`} xref section; ${rev.entries.size} object(s) found by scanning its bytes`,
          rev.index,
        );
      }
    }
    // Entries that point past the revision's end (into a later update) are not part of this revision.
    for (const [num, e] of rev.entries) {
      if (e.type === 1 && (e.offset >= rev.end || e.offset < 0)) {
        this.anomaly('XREF_OFFSET_OUT_OF_REVISION', `object ${num}'s xref offset ${e.offset} lies outside revision ${rev.index + 1}`, rev.index, num);
      }
    }
  }

  private firstBodyAtOrAfter(offset: number): number {
    let lo = 0;
    let hi = this.bodies.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.bodies[mid]!.offset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private bodiesByNumber?: Map<number, number[]>;

  /** The offset of the last body of object `num` before `end` (an index instead of a scan per object). */
  private lastBodyBefore(num: number, end: number): number | undefined {
    if (!this.bodiesByNumber) {
      this.bodiesByNumber = new Map();
      for (const b of this.bodies) {
        const list = this.bodiesByNumber.get(b.num);
        if (list) list.push(b.offset);
        else this.bodiesByNumber.set(b.num, [b.offset]);
      }
    }
    const list = this.bodiesByNumber.get(num);
    if (!list) return undefined;
    for (let i = list.length - 1; i >= 0; i--) if (list[i]! < end) return list[i];
    return undefined;
  }

  private countEntry(): void {
    if (++this.xrefEntryCount > MAX_XREF_ENTRIES) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF declares more cross-reference entries than Folio reads');
    }
  }

  private readXrefTable(rev: Revision, lx: Lexer): void {
    const buf = this.buf;
    for (;;) {
      const word = lx.peekWord();
      if (word === 'trailer') {
        lx.readWord();
        const t = lx.parseValue();
        if (!isDict(t)) throw new PdfSyntaxError('trailer is not a dictionary');
        rev.trailer = t;
        return;
      }
      const first = lx.readUInt();
      const count = lx.readUInt();
      if (first === undefined || count === undefined) throw new PdfSyntaxError('bad xref subsection header');
      lx.skipWhite();
      for (let i = 0; i < count; i++) {
        const num = first + i;
        this.countEntry();
        // Fast path: the nominal 20-byte entry `oooooooooo ggggg n\r\n`.
        let p = lx.pos;
        if (p + 18 <= buf.length && buf[p + 10] === 0x20 && buf[p + 16] === 0x20 && (buf[p + 17] === 0x6e || buf[p + 17] === 0x66)) {
          let off = 0;
          let gen = 0;
          let ok = true;
          for (let k = 0; k < 10; k++) {
            const c = buf[p + k]! - 0x30;
            if (c < 0 || c > 9) ok = false;
            off = off * 10 + c;
          }
          for (let k = 11; k < 16; k++) {
            const c = buf[p + k]! - 0x30;
            if (c < 0 || c > 9) ok = false;
            gen = gen * 10 + c;
          }
          if (ok) {
            this.setTableEntry(rev, num, buf[p + 17] === 0x6e, off, gen);
            p += 18;
            while (p < buf.length && (buf[p] === 0x20 || buf[p] === 0x0d || buf[p] === 0x0a)) p++;
            lx.pos = p;
            continue;
          }
        }
        // Entries are nominally 20 bytes; read them as tokens to tolerate 19/21-byte lines.
        const off = lx.readUInt();
        const gen = lx.readUInt();
        lx.skipWhite();
        const kind = buf[lx.pos];
        if (off === undefined || gen === undefined || (kind !== 0x6e && kind !== 0x66)) throw new PdfSyntaxError('bad xref entry');
        lx.pos++;
        lx.skipWhite();
        this.setTableEntry(rev, num, kind === 0x6e, off, gen);
      }
    }
  }

  private setTableEntry(rev: Revision, num: number, inUse: boolean, off: number, gen: number): void {
    // An offset of 0 with 'n' is a writer bug for a free entry.
    if (inUse && off > 0) rev.entries.set(num, { type: 1, offset: off, gen, stream: 0, index: 0 });
    // A free entry only matters when an earlier revision could have defined the number (a deletion).
    else if (!inUse && num !== 0 && rev.index > 0) rev.entries.set(num, gen === 0 ? FREE : { type: 0, offset: 0, gen, stream: 0, index: 0 });
  }

  private readXrefStream(rev: Revision, at: number, primary: boolean): void {
    const obj = parseIndirectAt(this.buf, at, (r) => this.lengthOf(r, rev.index));
    if (!isStream(obj.value) || !isName(obj.value.dict.map.get('Type'), 'XRef')) throw new PdfSyntaxError('startxref points at no xref');
    const d = obj.value.dict.map;
    if (primary) rev.trailer = obj.value.dict;
    const w = d.get('W');
    if (!Array.isArray(w) || w.length !== 3 || !w.every((x) => typeof x === 'number' && x >= 0 && x <= 8)) throw new PdfSyntaxError('bad /W');
    const [w0, w1, w2] = w as number[];
    const size = d.get('Size');
    const index = d.get('Index');
    const ranges: number[] = Array.isArray(index)
      ? (index.filter((x) => typeof x === 'number') as number[])
      : [0, typeof size === 'number' ? size : 0];
    const data = this.decode(obj.value, MAX_OBJSTM_BYTES);
    const rowLen = w0! + w1! + w2!;
    if (rowLen === 0) throw new PdfSyntaxError('empty /W');
    let p = 0;
    const field = (width: number, dflt: number) => {
      if (width === 0) return dflt;
      let v = 0;
      for (let k = 0; k < width; k++) v = v * 256 + (data[p++] ?? 0);
      return v;
    };
    for (let r = 0; r + 1 < ranges.length; r += 2) {
      const first = ranges[r]!;
      const count = ranges[r + 1]!;
      for (let i = 0; i < count && p + rowLen <= data.length; i++) {
        this.countEntry();
        const type = field(w0!, 1);
        const a = field(w1!, 0);
        const b = field(w2!, 0);
        const num = first + i;
        if (!primary && rev.entries.has(num)) continue; // hybrid: the table wins
        if (type === 1) rev.entries.set(num, { type: 1, offset: a, gen: b, stream: 0, index: 0 });
        else if (type === 2) rev.entries.set(num, { type: 2, offset: 0, gen: 0, stream: a, index: b });
        else if (type === 0 && num !== 0 && rev.index > 0) rev.entries.set(num, b === 0 ? FREE : { type: 0, offset: 0, gen: b, stream: 0, index: 0 });
      }
    }
  }

  decode(stream: PdfStream, max = MAX_OBJSTM_BYTES): Uint8Array {
    const out = decodeStream(this.buf, stream, Math.min(max, MAX_DECODED_BYTES - this.decodedBytes));
    this.decodedBytes += out.length;
    if (this.decodedBytes >= MAX_DECODED_BYTES) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF decompresses to more data than Folio reads');
    return out;
  }

  private lengthOf(ref: PdfRef, rev: number): number | undefined {
    const v = this.resolve(ref.num, rev)?.value;
    return typeof v === 'number' ? v : undefined;
  }

  private definitionIndex?: Map<number, number[]>;

  /**
   * The revisions (ascending) whose xref defines object `num`. Built once: looking a number up revision by
   * revision made every question O(revisions), and the per-signature analyses ask it for every object.
   */
  definitionsOf(num: number): readonly number[] {
    if (!this.ready) {
      // While the xref sections are still being read (a stream /Length resolved on the way).
      return this.revisions.filter((r) => r.entries.has(num)).map((r) => r.index);
    }
    if (!this.definitionIndex) {
      const index = new Map<number, number[]>();
      for (const rev of this.revisions) {
        for (const n of rev.entries.keys()) {
          const list = index.get(n);
          if (list) list.push(rev.index);
          else index.set(n, [rev.index]);
        }
      }
      this.definitionIndex = index;
    }
    return this.definitionIndex.get(num) ?? [];
  }

  /** The xref entry of object `num` as of revision `rev` (the latest definition at or before it). */
  entryAt(num: number, rev: number): { entry: XrefEntry; revision: number } | undefined {
    const defs = this.definitionsOf(num);
    const at = Math.min(rev, this.last);
    // Binary search for the last defining revision <= at.
    let lo = 0;
    let hi = defs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (defs[mid]! <= at) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    const r = defs[found]!;
    return { entry: this.revisions[r]!.entries.get(num)!, revision: r };
  }

  /** Parses the indirect object at a byte offset (cached); null when no object can be read there. */
  objectAt(offset: number, rev: number): IndirectObject | null {
    const hit = this.parsedAt.get(offset);
    if (hit !== undefined) return hit;
    let obj: IndirectObject | null = null;
    if (this.resolving > 8) return null; // /Length chains through other streams
    this.resolving++;
    try {
      obj = parseIndirectAt(this.buf, offset, (r) => this.lengthOf(r, rev));
    } catch (e) {
      if (!(e instanceof PdfSyntaxError)) throw e;
      obj = null;
    } finally {
      this.resolving--;
    }
    this.parsedAt.set(offset, obj);
    return obj;
  }

  /** Object `num` as of revision `rev`, or undefined when it is free or absent. */
  resolve(num: number, rev: number): ResolvedObject | undefined {
    const found = this.entryAt(num, rev);
    if (!found || found.entry.type === 0) return undefined;
    const { entry } = found;
    if (entry.type === 1) {
      let offset = entry.offset;
      // Tolerate offsets that land on the whitespace before the header (a few bytes, not a run of megabytes
      // that every entry could point into).
      for (let k = 0; k < 256 && offset < this.buf.length && isJsWhite(this.buf[offset]!); k++) offset++;
      let obj = offset < this.revisions[found.revision]!.end ? this.objectAt(offset, rev) : null;
      if (!obj) {
        // Broken offset: viewers fall back to the last body of that number in the bytes of the revision.
        const end = this.revisions[rev]!.end;
        const body = this.lastBodyBefore(num, end);
        this.anomaly('XREF_OFFSET_WRONG', `object ${num}'s xref offset ${entry.offset} holds no object`, found.revision, num);
        if (body === undefined) return undefined;
        obj = this.objectAt(body, rev);
        if (!obj) return undefined;
      } else if (obj.num !== num) {
        this.anomaly('XREF_NUMBER_MISMATCH', `xref maps object ${num} to a body that declares itself ${obj.num} ${obj.gen} obj`, found.revision, num);
      }
      return { num, value: obj.value, entry, declaredNum: obj.num, offset: obj.offset, end: obj.end };
    }
    const stm = this.objectStream(entry.stream, rev);
    if (!stm) return undefined;
    const slot = stm.offsets[entry.index];
    if (!slot) return undefined;
    if (slot.num !== num)
      this.anomaly('OBJSTM_NUMBER_MISMATCH', `object stream ${entry.stream} holds ${slot.num} where ${num} was expected`, found.revision, num);
    try {
      const lx = new Lexer(stm.data, stm.first + slot.off);
      return { num, value: lx.parseValue(), entry, declaredNum: slot.num };
    } catch (e) {
      if (e instanceof PdfSyntaxError) return undefined;
      throw e;
    }
  }

  private objectStream(num: number, rev: number): ObjStm | null {
    const found = this.entryAt(num, rev);
    if (!found || found.entry.type !== 1) {
      if (found?.entry.type === 2) this.anomaly('NESTED_OBJECT_STREAM', `object stream ${num} is itself compressed`, found.revision, num);
      return null;
    }
    const key = found.entry.offset;
    const hit = this.objStms.get(key);
    if (hit !== undefined) return hit;
    let result: ObjStm | null = null;
    this.objStms.set(key, null); // guards against a stream whose /Length resolves through itself
    const obj = this.objectAt(key, rev);
    if (obj && isStream(obj.value) && isName(obj.value.dict.map.get('Type'), 'ObjStm')) {
      try {
        const n = obj.value.dict.map.get('N');
        const first = obj.value.dict.map.get('First');
        if (typeof n === 'number' && typeof first === 'number' && n >= 0 && n <= MAX_OBJSTM_COUNT) {
          const data = this.decode(obj.value);
          const lx = new Lexer(data, 0, Math.min(first, data.length));
          const offsets: Array<{ num: number; off: number }> = [];
          for (let i = 0; i < n; i++) {
            const on = lx.readUInt();
            const off = lx.readUInt();
            if (on === undefined || off === undefined) break;
            offsets.push({ num: on, off });
          }
          result = { data, offsets, first };
        }
      } catch (e) {
        if (!(e instanceof StreamDecodeError || e instanceof PdfSyntaxError)) throw e;
      }
    }
    this.objStms.set(key, result);
    return result;
  }

  /** Follows references (bounded) to a direct value as of revision `rev`. */
  deref(v: PdfValue | undefined, rev: number): PdfValue | undefined {
    for (let hops = 0; isRef(v); hops++) {
      if (hops >= MAX_REF_HOPS) return undefined;
      v = this.resolve(v.num, rev)?.value;
    }
    return v;
  }

  dictAt(v: PdfValue | undefined, rev: number): PdfDict | undefined {
    return dictOf(this.deref(v, rev));
  }

  /** The trailer in force at revision `rev`: its own, or the latest earlier one holding /Root. */
  trailerAt(rev: number): PdfDict | undefined {
    for (let r = Math.min(rev, this.last); r >= 0; r--) {
      const t = this.revisions[r]!.trailer;
      if (t?.map.has('Root')) return t;
    }
    return undefined;
  }

  private readonly scannedCatalogs = new Map<number, PdfDict | undefined>();

  catalogAt(rev: number): PdfDict | undefined {
    const root = this.trailerAt(rev)?.map.get('Root');
    let cat = this.dictAt(root, rev);
    if (!cat) {
      // The scan below parses bodies one by one: once per revision, not once per question.
      const key = this.revisions[rev]?.end ?? this.buf.length;
      if (this.scannedCatalogs.has(key)) return this.scannedCatalogs.get(key);
      // No usable trailer (repaired file): the last /Type /Catalog body in the revision's bytes.
      const end = this.revisions[rev]?.end ?? this.buf.length;
      for (let i = this.bodies.length - 1; i >= 0; i--) {
        const b = this.bodies[i]!;
        if (b.offset >= end) continue;
        const o = this.objectAt(b.offset, rev);
        if (isDict(o?.value) && isName(o.value.map.get('Type'), 'Catalog')) {
          cat = o.value;
          break;
        }
      }
      this.scannedCatalogs.set(key, cat);
    }
    return cat;
  }

  /**
   * The reference of the catalog in force at `rev`: the trailer's /Root, or for a file without a usable
   * trailer the last body, in the revision's bytes, that holds the catalog `catalogAt` found.
   */
  catalogRefAt(rev: number): PdfRef | undefined {
    const root = this.trailerAt(rev)?.map.get('Root');
    if (isRef(root)) return root;
    const cat = this.catalogAt(rev);
    const end = this.revisions[rev]?.end ?? this.buf.length;
    for (let i = this.bodies.length - 1; cat && i >= 0; i--) {
      const b = this.bodies[i]!;
      if (b.offset >= end) continue;
      if (this.objectAt(b.offset, rev)?.value === cat) return { kind: 'ref', num: b.num, gen: b.gen };
    }
    return undefined;
  }

  isEncrypted(): boolean {
    return this.revisions.some((r) => r.trailer?.map.has('Encrypt'));
  }

  /** The revision whose bytes contain `offset`. */
  revisionOf(offset: number): number {
    const r = this.revisions.findIndex((x) => offset >= x.start && offset < x.end);
    return r < 0 ? this.last : r;
  }

  /** Every object number defined in revisions (from, to]. */
  numbersChangedAfter(from: number, to = this.last): Set<number> {
    const out = new Set<number>();
    for (let r = from + 1; r <= to; r++) for (const n of this.revisions[r]!.entries.keys()) out.add(n);
    return out;
  }

  /** The innermost object header at or before `offset` (for locating raw /ByteRange hits). */
  bodyBefore(offset: number): { num: number; gen: number; offset: number } | undefined {
    let lo = 0;
    let hi = this.bodies.length - 1;
    let best: { num: number; gen: number; offset: number } | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.bodies[mid]!.offset <= offset) {
        best = this.bodies[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }

  /** Position of an ASCII `needle` at or after `from` (a native search over the bytes), or -1. */
  indexOf(needle: string, from = 0): number {
    return this.view.indexOf(needle, Math.max(0, from), 'latin1');
  }

  latin1(start: number, end: number): string {
    return latin1(this.buf, start, end);
  }
}

/** The bytes that `/\s/` matches as latin1 characters (what the offset tolerance of `resolve` has always skipped). */
const isJsWhite = (c: number) => (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0;
