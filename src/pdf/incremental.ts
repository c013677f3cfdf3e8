/**
 * Incremental updates (ISO 32000-1 §7.5.6): the original bytes are never touched; new and changed objects
 * are appended with a cross-reference section that points back (/Prev) at the previous one. The section
 * has the same form as the document's last one — a classic `xref` table, or a cross-reference stream when
 * the document uses them — so readers that follow the chain of either kind find every revision.
 */

export interface LastXref {
  /** Byte offset of the last cross-reference section (the file's final `startxref` value). */
  offset: number;
  /**
   * `rebuilt`: the file's own cross-reference information is unusable, so the update carries a complete
   * table of every object found by scanning the bytes (`scanned`) and no /Prev.
   */
  kind: 'table' | 'stream' | 'rebuilt';
  scanned?: Map<number, { generation: number; offset: number }>;
  /** The trailer's /Size: one more than the highest object number in use. */
  size: number;
  /** False when a classic table entry points at the wrong bytes (readers reconstruct such files). */
  entriesValid: boolean;
}

const latin1 = (bytes: Uint8Array, start: number, end: number) =>
  Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.max(0, end - start)).toString('latin1');

/**
 * Reads the final `startxref` and checks that it really points at a cross-reference section. Returns
 * undefined for a document whose cross-reference information is broken (it then needs repair first).
 *
 * This is the writer's precondition, stricter than the reader on purpose: the reader (reader.ts) tolerates
 * and silently repairs what viewers tolerate (offsets a few bytes off, 19/21-byte rows, a body found by
 * scanning), whereas an update may only be chained to a section whose every entry is exact. The signer
 * also asks the reader, and refuses to chain to a section the reader found broken.
 */
export function readLastXref(bytes: Uint8Array): LastXref | undefined {
  const tailStart = Math.max(0, bytes.length - 4096);
  const tail = latin1(bytes, tailStart, bytes.length);
  const at = tail.lastIndexOf('startxref');
  if (at < 0) return undefined;
  const m = /^startxref\s+(\d{1,12})\s+%%EOF/.exec(tail.slice(at));
  if (!m) return undefined;
  const offset = Number(m[1]);
  if (offset <= 0 || offset >= bytes.length) return undefined;
  const head = latin1(bytes, offset, Math.min(bytes.length, offset + 512));
  if (/^xref[\r\n ]/.test(head)) {
    // Every entry line costs at least 18 bytes, so a chain of honest tables reads at most this many lines;
    // tables that overlap through /Prev would otherwise re-read the same bytes once per hop.
    const budget = { lines: Math.ceil(bytes.length / 18) + 1024 };
    const section = readXrefTable(bytes, offset, budget);
    if (!section || section.size === undefined || !section.hasRoot) return undefined;
    // Follow the chain of classic tables and check that every in-use entry points at its object: a
    // shifted or truncated table must be repaired before anything is appended to it.
    let current: XrefTable | undefined = section;
    const seen = new Set<number>([offset]);
    let entriesValid = true;
    while (current) {
      for (const [num, gen, at] of current.entries) {
        if (!objectHeaderAt(bytes, at, num, gen)) {
          entriesValid = false;
          break;
        }
      }
      if (current.prev === undefined) break;
      if (seen.has(current.prev) || seen.size > 256 || current.prev >= bytes.length) return undefined;
      seen.add(current.prev);
      const prevHead = latin1(bytes, current.prev, Math.min(bytes.length, current.prev + 8));
      if (!/^xref/.test(prevHead)) break; // an xref stream further back (hybrid history): not validated here
      current = readXrefTable(bytes, current.prev, budget);
      if (!current) return undefined;
    }
    return { offset, kind: 'table', size: section.size, entriesValid };
  }
  const obj = /^(\d+)\s+(\d+)\s+obj\s*<</.exec(head);
  if (obj) {
    const dictEnd = head.indexOf('stream');
    const dict = dictEnd > 0 ? head.slice(0, dictEnd) : head;
    const size = /\/Size\s+(\d{1,12})/.exec(dict);
    if (!/\/Type\s*\/XRef\b/.test(dict) || !size) return undefined;
    return { offset, kind: 'stream', size: Number(size[1]), entriesValid: true };
  }
  return undefined;
}

/**
 * Locates every `N G obj` in a file without object streams, the last definition of a number winning, as
 * readers do when they reconstruct a damaged cross-reference table. Undefined when the file has object
 * streams (their objects cannot be addressed by a classic table).
 */
export function scanObjects(bytes: Uint8Array): LastXref | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (/\/Type\s*\/ObjStm\b/.test(text)) return undefined;
  const scanned = new Map<number, { generation: number; offset: number }>();
  const header = /(^|[\r\n])(\d{1,9})[ \t\r\n\f\0]+(\d{1,5})[ \t\r\n\f\0]+obj\b/g;
  for (let m = header.exec(text); m; m = header.exec(text)) {
    scanned.set(Number(m[2]), { generation: Number(m[3]), offset: m.index + m[1]!.length });
  }
  if (scanned.size === 0) return undefined;
  // A loop, not Math.max(...keys): spreading a million arguments overflows the stack.
  let size = 0;
  for (const n of scanned.keys()) if (n + 1 > size) size = n + 1;
  return { offset: 0, kind: 'rebuilt', size, entriesValid: true, scanned };
}

interface XrefTable {
  entries: Array<[number, number, number]>;
  size?: number;
  prev?: number;
  hasRoot: boolean;
}

/** Parses one classic `xref` table and its trailer (size, prev, root) starting at `offset`. */
function readXrefTable(bytes: Uint8Array, offset: number, budget: { lines: number }): XrefTable | undefined {
  const entries: Array<[number, number, number]> = [];
  let pos = offset + 4;
  const readLine = (): string | undefined => {
    if (--budget.lines < 0) return undefined;
    while (pos < bytes.length && (bytes[pos] === 0x0a || bytes[pos] === 0x0d || bytes[pos] === 0x20)) pos++;
    const start = pos;
    while (pos < bytes.length && bytes[pos] !== 0x0a && bytes[pos] !== 0x0d && pos - start < 64) pos++;
    return pos > start ? latin1(bytes, start, pos) : undefined;
  };
  for (;;) {
    const line = readLine();
    if (line === undefined) return undefined;
    if (line.startsWith('trailer')) {
      const trailer = latin1(bytes, pos - line.length, Math.min(bytes.length, pos - line.length + 4096));
      const end = trailer.indexOf('startxref');
      const dict = end > 0 ? trailer.slice(0, end) : trailer;
      const size = /\/Size\s+(\d{1,12})/.exec(dict);
      const prev = /\/Prev\s+(\d{1,12})/.exec(dict);
      return {
        entries,
        size: size ? Number(size[1]) : undefined,
        prev: prev ? Number(prev[1]) : undefined,
        hasRoot: /\/Root\s+\d+\s+\d+\s+R/.test(dict),
      };
    }
    const sub = /^(\d{1,9})\s+(\d{1,9})\s*$/.exec(line);
    if (!sub) return undefined;
    const first = Number(sub[1]);
    const count = Number(sub[2]);
    for (let i = 0; i < count; i++) {
      const row = readLine();
      const m = row && /^(\d{10}) (\d{5}) ([nf])/.exec(row);
      if (!m) return undefined;
      if (m[3] === 'n') entries.push([first + i, Number(m[2]), Number(m[1])]);
    }
  }
}

function objectHeaderAt(bytes: Uint8Array, at: number, num: number, gen: number): boolean {
  if (at <= 0 || at >= bytes.length) return false;
  const head = latin1(bytes, at, Math.min(bytes.length, at + 32));
  const m = /^\s*(\d+)\s+(\d+)\s+obj/.exec(head);
  return !!m && Number(m[1]) === num && Number(m[2]) === gen;
}

export interface UpdateObject {
  objectNumber: number;
  generation: number;
  /** The complete `N G obj … endobj` bytes, ending with a newline. */
  bytes: Uint8Array;
}

export interface TrailerEntries {
  /** e.g. "12 0 R" */
  root: string;
  info?: string;
  /** Hex strings without angle brackets: the first is kept from the original, the second is new. */
  id?: [string, string];
}

export interface IncrementalUpdate {
  /** Original bytes followed by the update. */
  bytes: Uint8Array;
  /** Byte offset of each written object in `bytes`, by object number. */
  offsets: Map<number, number>;
}

/** Groups sorted object numbers into runs of consecutive numbers (the xref subsections). */
function runs(numbers: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const n of numbers) {
    const last = out[out.length - 1];
    if (last && last[0] + last[1] === n) last[1]++;
    else out.push([n, 1]);
  }
  return out;
}

/**
 * Appends `objects` to `original` with a cross-reference section of the same kind as the last one.
 * `size` is the new trailer /Size (highest object number + 1, including the xref stream if any).
 */
export function appendIncrementalUpdate(
  original: Uint8Array,
  last: LastXref,
  objects: UpdateObject[],
  trailer: TrailerEntries,
  size: number,
): IncrementalUpdate {
  const parts: Uint8Array[] = [original];
  let pos = original.length;
  const push = (b: Uint8Array | string) => {
    const bytes = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(bytes);
    pos += bytes.length;
  };
  // The update starts on a fresh line even when the original does not end with an EOL.
  const endsWithEol = original.length > 0 && (original[original.length - 1] === 0x0a || original[original.length - 1] === 0x0d);
  if (!endsWithEol) push('\n');

  const offsets = new Map<number, number>();
  for (const o of objects) {
    offsets.set(o.objectNumber, pos);
    push(o.bytes);
  }
  const generations = new Map(objects.map((o) => [o.objectNumber, o.generation]));
  const trailerText =
    `/Size ${size} /Root ${trailer.root}` +
    (trailer.info ? ` /Info ${trailer.info}` : '') +
    (trailer.id ? ` /ID [<${trailer.id[0]}> <${trailer.id[1]}>]` : '') +
    (last.kind === 'rebuilt' ? '' : ` /Prev ${last.offset}`);

  if (last.kind === 'table' || last.kind === 'rebuilt') {
    const xrefOffset = pos;
    // A rebuilt table lists every object of the file (ours win) and the head of the free list.
    const rows = new Map<number, string>();
    if (last.kind === 'rebuilt') {
      rows.set(0, '0000000000 65535 f\r\n');
      for (const [n, o] of last.scanned!) rows.set(n, `${String(o.offset).padStart(10, '0')} ${String(o.generation).padStart(5, '0')} n\r\n`);
    }
    for (const [n, at] of offsets) rows.set(n, `${String(at).padStart(10, '0')} ${String(generations.get(n)).padStart(5, '0')} n\r\n`);
    let table = 'xref\n';
    for (const [start, count] of runs([...rows.keys()].sort((a, b) => a - b))) {
      table += `${start} ${count}\n`;
      for (let n = start; n < start + count; n++) table += rows.get(n)!;
    }
    push(table);
    push(`trailer\n<< ${trailerText} >>\nstartxref\n${xrefOffset}\n%%EOF\n`);
  } else {
    // Cross-reference stream: object number size-1 is reserved for it by the caller.
    const xrefNumber = size - 1;
    const xrefOffset = pos;
    offsets.set(xrefNumber, xrefOffset);
    generations.set(xrefNumber, 0);
    const numbers = [...offsets.keys()].sort((a, b) => a - b);
    const w = [1, 8, 2];
    const rows = Buffer.alloc(numbers.length * 11);
    numbers.forEach((n, i) => {
      rows[i * 11] = 1;
      rows.writeBigUInt64BE(BigInt(offsets.get(n)!), i * 11 + 1);
      rows.writeUInt16BE(generations.get(n)!, i * 11 + 9);
    });
    const index = runs(numbers)
      .map(([s, c]) => `${s} ${c}`)
      .join(' ');
    push(`${xrefNumber} 0 obj\n<< /Type /XRef ${trailerText} /W [${w.join(' ')}] /Index [${index}] /Length ${rows.length} >>\nstream\n`);
    push(rows);
    push(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`);
  }
  const bytes = new Uint8Array(pos);
  let o = 0;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return { bytes, offsets };
}
