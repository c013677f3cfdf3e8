/**
 * DSS/VRI rule (PAdES, ISO 32000-2 §12.8.4.3; pyHanko's DSSCompareRule): the Document Security Store holds
 * certificates, OCSP responses and CRLs (/Certs, /OCSPs, /CRLs: arrays of streams, direct or indirect) and
 * per-signature /VRI entries (keyed by the SHA-1 of a signature's /Contents in hex; /Cert, /OCSP, /CRL
 * arrays, /TU, /TS), each dictionary direct or indirect. Adding or extending it is validation data
 * (SIGNATURES_ONLY, a long-term-validation update at every DocMDP level). A "DSS" carrying anything else, an
 * entry of the wrong type, the DSS or its /VRI removed, or a VRI entry of the signed revision changed or
 * removed is OTHER (PAdES allows dropping single certificates or responses from the arrays, not the rest).
 * Where its indirect parts may be reached from is the reference-path rule's (rules/paths.ts).
 */
import { dictOf, isRef, isStream, sameValue, type PdfDict, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import type { ModificationDetail, ModificationLevel } from '../modifications.js';

const DSS_KEYS = new Set(['Type', 'Certs', 'OCSPs', 'CRLs', 'VRI']);
const VRI_ENTRY_KEYS = new Set(['Type', 'Cert', 'OCSP', 'CRL', 'TU', 'TS']);
/** pyHanko's VRI key pattern (40 characters: the hex SHA-1 Folio and others write upper-case). */
const VRI_KEY = /^[A-Za-z0-9]{40}$/;
/** VRI entries checked per document (each is a dictionary and up to three arrays). */
const MAX_VRI_ENTRIES = 10_000;

export function judgeDss(value: PdfValue, isStore: boolean, kind: 'added' | 'changed'): { level: ModificationLevel; issue: string } {
  const d = dictOf(value);
  // A dictionary with /VRI, /OCSPs or /CRLs that is not the catalog's /DSS is judged as a store too.
  const store = isStore || (!!d && (d.map.has('VRI') || d.map.has('OCSPs') || d.map.has('CRLs')));
  const allowed = store ? DSS_KEYS : VRI_ENTRY_KEYS;
  const oddKeys = d ? [...d.map.keys()].filter((k) => !allowed.has(k)) : ['(not a dictionary)'];
  if (oddKeys.length)
    return { level: 'OTHER', issue: `validation data (DSS) ${kind} with entries that are not validation data (${oddKeys.join(', ')})` };
  return { level: 'SIGNATURES_ONLY', issue: `validation data (DSS${store ? '' : ' VRI'}) ${kind}` };
}

/** Whether `v` (as of `rev`) is an array of references to streams. */
function streamArray(doc: PdfDocument, v: PdfValue | undefined, rev: number): boolean {
  const arr = doc.deref(v, rev);
  return Array.isArray(arr) && arr.every((x) => isRef(x) && isStream(doc.resolve(x.num, rev)?.value));
}

/** Shape problems per document and DSS dictionary (each signature's analysis asks about the same ones). */
const shapes = new WeakMap<PdfDocument, Map<PdfDict, string | undefined>>();

/** What is wrong with the shape of a DSS (as of `rev`), or undefined; memoised per parsed DSS dictionary. */
function dssShapeProblem(doc: PdfDocument, dss: PdfDict, rev: number): string | undefined {
  let memo = shapes.get(doc);
  if (!memo) shapes.set(doc, (memo = new Map()));
  if (memo.has(dss)) return memo.get(dss);
  const problem = shapeProblem(doc, dss, rev);
  memo.set(dss, problem);
  return problem;
}

function shapeProblem(doc: PdfDocument, dss: PdfDict, rev: number): string | undefined {
  const odd = [...dss.map.keys()].filter((k) => !DSS_KEYS.has(k));
  if (odd.length) return `the DSS holds entries that are not validation data (${odd.join(', ')})`;
  for (const k of ['Certs', 'OCSPs', 'CRLs']) {
    if (dss.map.has(k) && !streamArray(doc, dss.map.get(k), rev)) return `the DSS /${k} is not an array of streams`;
  }
  if (!dss.map.has('VRI')) return undefined;
  const vri = doc.dictAt(dss.map.get('VRI'), rev);
  if (!vri) return 'the DSS /VRI is not a dictionary';
  let n = 0;
  for (const [key, v] of vri.map) {
    if (++n > MAX_VRI_ENTRIES) return `the DSS /VRI has more than ${MAX_VRI_ENTRIES} entries`;
    if (!VRI_KEY.test(key)) return `the VRI key /${key} is not the hash of a signature`;
    const entry = doc.dictAt(v, rev);
    if (!entry || isStream(doc.deref(v, rev))) return `the VRI entry /${key} is not a dictionary`;
    const oddEntry = [...entry.map.keys()].filter((k) => !VRI_ENTRY_KEYS.has(k));
    if (oddEntry.length) return `the VRI entry /${key} holds entries that are not validation data (${oddEntry.join(', ')})`;
    for (const k of ['Cert', 'OCSP', 'CRL']) {
      if (entry.map.has(k) && !streamArray(doc, entry.map.get(k), rev)) return `the VRI entry /${key} /${k} is not an array of streams`;
    }
  }
  return undefined;
}

/**
 * The DSS as a whole, from the signed revision `fromRev` to the last: removed, reshaped, or a VRI entry of the
 * signed revision changed or removed (compared as written: an indirect entry must stay the same reference,
 * whose object the per-object analysis compares). Reported as one detail each.
 */
export function dssChanges(doc: PdfDocument, fromRev: number): ModificationDetail[] {
  const last = doc.last;
  const beforeRaw = doc.catalogAt(fromRev)?.map.get('DSS');
  const nowRaw = doc.catalogAt(last)?.map.get('DSS');
  if (beforeRaw === undefined && nowRaw === undefined) return [];
  const out = (issue: string): ModificationDetail[] => [{ kind: 'changed', level: 'OTHER', issue }];
  if (beforeRaw !== undefined && nowRaw === undefined) return out('the DSS of the signed revision was removed');
  const before = doc.dictAt(beforeRaw, fromRev);
  const now = doc.dictAt(nowRaw, last);
  // A problem the signed revision already had is signed content, not a change.
  const problemBefore = beforeRaw === undefined ? undefined : before ? dssShapeProblem(doc, before, fromRev) : 'not a dictionary';
  if (!now) return problemBefore ? [] : out('the catalog /DSS is not a dictionary');
  const shape = dssShapeProblem(doc, now, last);
  if (shape && !problemBefore) return out(shape);
  const vriBefore = before && doc.dictAt(before.map.get('VRI'), fromRev);
  if (!vriBefore) return [];
  const vriNow = doc.dictAt(now.map.get('VRI'), last);
  if (!vriNow) return out('the DSS /VRI of the signed revision was removed');
  let n = 0;
  for (const [key, v] of vriBefore.map) {
    if (++n > MAX_VRI_ENTRIES) break;
    const w = vriNow.map.get(key);
    if (w === undefined) return out(`the VRI entry /${key} of the signed revision was removed`);
    // Indirect or direct as it was: the same reference (whose object the per-object analysis compares), or an
    // equal direct dictionary.
    if (isRef(v) !== isRef(w) || !sameValue(doc.buf, v, w)) return out(`the VRI entry /${key} of the signed revision was changed`);
  }
  return [];
}
