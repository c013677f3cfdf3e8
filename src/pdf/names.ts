/**
 * pdf-lib interns every name it ever makes (`PDFName.of` keeps each in a module-level Map, forever). Names are
 * compared by identity everywhere in pdf-lib (`dict.get(PDFName.of('Type'))`), so interning itself is needed;
 * keeping every name forever is not. An engine thread lives for many requests, and each document opened for
 * authoring hands all its names to PDFName.of: a 9 MB PDF with 200,000 distinct names left ~240 MB in the
 * thread's heap for good, and a few such requests took the thread to its heap ceiling, failing whichever job
 * ran then (measured: 270 → 506 → 750 → 979 MB after GC, one such document each time).
 *
 * So names are interned weakly: the names pdf-lib made before Folio first opened a document (its own
 * constants, PDFName.Length and the like, and those of every module loaded by then) stay in pdf-lib's map; every
 * later name is held through a WeakRef. While any object refers to a name, PDFName.of returns that same
 * instance (identity holds exactly as before); once nothing does, it is collected and a later PDFName.of makes
 * a fresh one, which nobody can tell apart. No library offers this: it is a patch to pdf-lib's one function,
 * written here because pdf-lib's map is private (it is found by watching the one Map.set a new name makes).
 */
import { PDFName } from '@cantoo/pdf-lib';

/** pdf-lib's own decoding of #xx escapes in PDFName.of (upper-case hex only, as its code has it). */
const decode = (name: string) => name.replace(/#([\dABCDEF]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

let installed = false;

/** pdf-lib's private name map, found by watching the Map.set that a name never made before causes. */
function findPool(of: (name: string) => PDFName): Map<string, PDFName> | undefined {
  const probe = `FolioProbe${process.hrtime.bigint()}${Math.random().toString(36).slice(2)}`;
  const set = Map.prototype.set;
  let pool: Map<string, PDFName> | undefined;
  Map.prototype.set = function watched<K, V>(this: Map<K, V>, key: K, value: V) {
    if (key === probe && value instanceof PDFName) pool = this as unknown as Map<string, PDFName>;
    return set.call(this, key, value) as Map<K, V>;
  };
  try {
    of(probe);
  } finally {
    Map.prototype.set = set;
  }
  pool?.delete(probe);
  return pool;
}

/**
 * Makes pdf-lib's name interning weak for every name made from now on. Idempotent; returns false (and changes
 * nothing) if pdf-lib's map cannot be found, as with a pdf-lib whose PDFName.of works differently.
 */
export function internNamesWeakly(): boolean {
  if (installed) return true;
  const of = PDFName.of.bind(PDFName);
  const pool = findPool(of);
  if (!pool) return false;
  const weak = new Map<string, WeakRef<PDFName>>();
  const forget = new FinalizationRegistry<string>((key) => {
    // Only if the entry is still the collected one: the name may have been made again since.
    if (weak.get(key)?.deref() === undefined) weak.delete(key);
  });
  PDFName.of = (name: string): PDFName => {
    const key = decode(name);
    const kept = pool.get(key) ?? weak.get(key)?.deref();
    if (kept) return kept;
    // pdf-lib makes it (its constructor is private) and files it in its map; it is moved to the weak one.
    const made = of(name);
    pool.delete(key);
    weak.set(key, new WeakRef(made));
    forget.register(made, key);
    return made;
  };
  installed = true;
  return true;
}

internNamesWeakly();
