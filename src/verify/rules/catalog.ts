/**
 * Catalog rule (pyHanko's CatalogModificationRule, iText's catalog comparison): a later revision may change the
 * catalog's /AcroForm, /DSS, /Metadata (each judged by its own rule), /Extensions and /Version — what Adobe and
 * pyHanko write whenever they sign (a developer extension for PAdES or ISO 32000-2 features, /Version /2.0, an
 * XMP packet) — and nothing else. /AcroForm, /DSS and /Extensions, once there, may not be removed (both tools
 * refuse it: removing them drops signatures' validation data or changes how the signed document is read).
 *
 * /Extensions (ISO 32000-2 §7.12.3) is judged revision by revision: entries (a developer-extension dictionary,
 * or an array of them) may be added; an existing one may only raise its /ExtensionLevel or /BaseVersion, as
 * iText checks, any other change or a removal is OTHER. Its reference paths are the reference-path rule's.
 */
import { isName, sameValue, type PdfDict, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import type { ModificationLevel } from '../modifications.js';

/** Catalog entries a later revision may change. */
export const CATALOG_KEYS: ReadonlySet<string> = new Set(['AcroForm', 'DSS', 'Extensions', 'Version', 'Metadata']);
/** Catalog entries a later revision may not remove. */
const KEPT_KEYS = ['AcroForm', 'DSS', 'Extensions'];

/** Why a change of the catalog from `a` to `b` (with these changed keys) is not one the rule permits. */
export function catalogProblem(a: PdfDict, b: PdfDict, changed: string[]): string | undefined {
  const odd = changed.filter((k) => !CATALOG_KEYS.has(k));
  if (odd.length) return `catalog changed (${odd.join(', ')})`;
  const removed = KEPT_KEYS.filter((k) => a.map.has(k) && !b.map.has(k));
  if (removed.length) return `catalog entr${removed.length > 1 ? 'ies' : 'y'} ${removed.map((k) => `/${k}`).join(', ')} removed`;
  const version = b.map.get('Version');
  if (version !== undefined && !isName(version)) return 'catalog /Version is not a name';
  return undefined;
}

const EXTENSION_KEYS = new Set(['Type', 'BaseVersion', 'ExtensionLevel', 'URL', 'ExtensionRevision']);

/** The developer-extension dictionaries of one /Extensions entry (a dictionary or an array of them). */
function extensionDicts(doc: PdfDocument, v: PdfValue | undefined, rev: number): PdfDict[] | undefined {
  const d = doc.deref(v, rev);
  const list = Array.isArray(d) ? d.map((x) => doc.dictAt(x, rev)) : [doc.dictAt(d, rev)];
  return list.every((x): x is PdfDict => !!x) ? list : undefined;
}

const versionNumber = (v: PdfValue | undefined) => (isName(v) ? Number(v.name) : undefined);

/** Whether `b` is `a` with its level or base version kept or raised and nothing else changed. */
function sameOrRaised(doc: PdfDocument, a: PdfDict, aRev: number, b: PdfDict, bRev: number): boolean {
  for (const k of new Set([...a.map.keys(), ...b.map.keys()])) {
    const x = doc.deref(a.map.get(k), aRev);
    const y = doc.deref(b.map.get(k), bRev);
    if (k === 'ExtensionLevel') {
      if (typeof x === 'number' && !(typeof y === 'number' && y >= x)) return false;
    } else if (k === 'BaseVersion') {
      const xv = versionNumber(x);
      const yv = versionNumber(y);
      if (xv !== undefined && !(yv !== undefined && yv >= xv)) return false;
    } else if (x === undefined || y === undefined || !sameValue(doc.buf, x, y)) return false;
  }
  return true;
}

/** One revision's step of /Extensions (see the header). */
function extensionsStep(doc: PdfDocument, aRaw: PdfValue | undefined, aRev: number, bRaw: PdfValue | undefined, bRev: number): ModificationLevel {
  const a = doc.dictAt(aRaw, aRev);
  const b = doc.dictAt(bRaw, bRev);
  if (!a && !b) return aRaw === undefined && bRaw === undefined ? 'NONE' : aRaw === undefined ? 'OTHER' : 'NONE';
  if (!b) return 'OTHER';
  for (const [k, v] of a?.map ?? []) {
    if (k === 'Type') continue;
    const before = extensionDicts(doc, v, aRev);
    const after = extensionDicts(doc, b.map.get(k), bRev);
    if (!after) return 'OTHER';
    // Each extension declared before is still declared, at the same or a higher level.
    if (before && !before.every((x) => after.some((y) => sameOrRaised(doc, x, aRev, y, bRev)))) return 'OTHER';
  }
  for (const [k, v] of b.map) {
    if (k === 'Type' || a?.map.has(k)) continue;
    const added = extensionDicts(doc, v, bRev);
    if (!added || !added.every((x) => [...x.map.keys()].every((key) => EXTENSION_KEYS.has(key)))) return 'OTHER';
  }
  return 'SIGNATURES_ONLY';
}

/**
 * /Extensions judged revision by revision from `fromRev` to the last: an entry changed in one revision and
 * changed back (or extended) in a later one is still seen.
 */
export function extensionsLevel(doc: PdfDocument, fromRev: number): ModificationLevel {
  let level: ModificationLevel = 'NONE';
  for (let r = fromRev + 1; r <= doc.last; r++) {
    const step = extensionsStep(doc, doc.catalogAt(r - 1)?.map.get('Extensions'), r - 1, doc.catalogAt(r)?.map.get('Extensions'), r);
    if (step === 'OTHER') return 'OTHER';
    if (step !== 'NONE') level = step;
  }
  return level === 'NONE' ? 'SIGNATURES_ONLY' : level;
}
