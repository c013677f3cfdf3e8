/**
 * Folio audit revisions. POST /v1/sign appends, in the same incremental update as its signature, audit-trail
 * pages, an embedded `audit-trail.json` and a signature field. For an earlier signature those are "pages added
 * after signing" (OTHER), so a PDF signed twice by Folio would fail. A revision is exempted (graded
 * SIGNATURES_ONLY for earlier signatures) only when its *shape* is exactly what the signer writes, checked here,
 * and — checked by the caller — a cryptographically intact signature issued by this service covers it through
 * its own end. Anything an attacker adds lives in another revision, which keeps its normal grading.
 */
import crypto from 'node:crypto';
import {
  AUDIT_TRAIL_FILE_NAME,
  collectRefs,
  differingKeys,
  parseAuditRecord,
  dictOf,
  isName,
  isRef,
  sameValue,
  type PdfDict,
  type PdfDocument,
  type PdfValue,
} from '../pdf/index.js';
import { auditTrailText } from './audit-trail.js';
import type { ReferrerIndex } from './referrers.js';
import { forEachPage, hasVisibleAppearance } from './signatures.js';

export const AUDIT_REVISION_DETAIL = 'audit-trail pages and attachment appended by a signature issued by this service';

/** Reader anomalies that mean a revision's xref does not say plainly what it defines (modifications.ts reports them). */
export const STRUCTURAL_ANOMALIES: ReadonlySet<string> = new Set([
  'NO_PREV',
  'PREV_MISMATCH',
  'XREF_REPAIRED',
  'XREF_NUMBER_MISMATCH',
  'TRAILING_BYTES',
  'XREF_OFFSET_OUT_OF_REVISION',
  'OBJSTM_NUMBER_MISMATCH',
  'XREF_OFFSET_WRONG',
]);
/** An audit revision must be plainer still: no object stream inside another either. */
const DISQUALIFYING_ANOMALIES = new Set([...STRUCTURAL_ANOMALIES, 'NESTED_OBJECT_STREAM']);

/**
 * Why revision `rev` (0-based) is not shaped like a Folio audit revision, or undefined when it is.
 * `referrers` maps an object number to the objects referring to it at the final revision.
 */
export function auditRevisionShapeProblem(doc: PdfDocument, rev: number, referrers: () => ReferrerIndex): string | undefined {
  if (rev < 1 || rev > doc.last) return 'not an incremental update';
  const prev = rev - 1;
  const revision = doc.revisions[rev]!;
  const prevEnd = doc.revisions[prev]!.end;
  if (revision.repaired || (revision.xref !== 'table' && revision.xref !== 'stream')) return 'the update has no regular xref';

  // The audit file describes exactly the bytes before this update.
  const text = auditTrailText(doc, rev);
  if (text === undefined) return `no ${AUDIT_TRAIL_FILE_NAME}`;
  const parsed = parseAuditRecord(text);
  if ('problem' in parsed) return parsed.problem;
  const json = parsed.record;
  // The signer hashes the input as received; the end-of-line after its %%EOF may sit on either side.
  const len = json.pdfLength;
  if (
    typeof len !== 'number' ||
    !Number.isInteger(len) ||
    Math.abs(len - prevEnd) > 2 ||
    len > revision.end ||
    !/^[\r\n]*$/.test(doc.latin1(Math.min(len, prevEnd), Math.max(len, prevEnd)))
  ) {
    return `${AUDIT_TRAIL_FILE_NAME} pdfLength is not the end of the previous revision`;
  }
  const digest = crypto.createHash('sha256').update(doc.buf.subarray(0, len)).digest('hex');
  if (typeof json.pdfSha256 !== 'string' || json.pdfSha256.toLowerCase() !== digest) return `${AUDIT_TRAIL_FILE_NAME} pdfSha256 does not match`;

  // Same catalog; the objects the signer may rewrite (as numbered before the update).
  const rootA = doc.trailerAt(prev)?.map.get('Root');
  const rootB = doc.trailerAt(rev)?.map.get('Root');
  if (!isRef(rootA) || !isRef(rootB) || rootA.num !== rootB.num) return 'the update changes the trailer /Root';
  const catA = doc.dictAt(rootA, prev);
  const catB = doc.dictAt(rootB, rev);
  if (!catA || !catB) return 'no catalog';
  // Each rewritable object has one role and one owner; arrays the signer appends to must not be shared with
  // other content (an /AF array that is also a page's /Contents array would otherwise change that page).
  const rewritable = new Map<number, number | undefined>([[rootA.num, undefined]]);
  const sharedArrays: number[] = [];
  let duplicate = false;
  const addRef = (v: PdfValue | undefined, owner: number | undefined, array: boolean) => {
    if (!isRef(v)) return;
    if (rewritable.has(v.num)) duplicate = true;
    rewritable.set(v.num, owner);
    if (array) sharedArrays.push(v.num);
  };
  addRef(catA.map.get('Names'), rootA.num, false);
  addRef(catA.map.get('AF'), rootA.num, true);
  const formRef = catA.map.get('AcroForm');
  addRef(formRef, rootA.num, false);
  addRef(doc.dictAt(formRef, prev)?.map.get('Fields'), isRef(formRef) ? formRef.num : rootA.num, true);
  const pagesRef = catA.map.get('Pages');
  if (!isRef(pagesRef)) return 'the page tree root is not indirect';
  addRef(pagesRef, rootA.num, false);
  const pagesA = doc.dictAt(pagesRef, prev);
  addRef(pagesA?.map.get('Kids'), pagesRef.num, true);
  let lastPageNum: number | undefined;
  forEachPage(doc, prev, (_page, num) => (lastPageNum = num));
  if (lastPageNum !== undefined) {
    if (rewritable.has(lastPageNum)) duplicate = true;
    rewritable.set(lastPageNum, undefined);
    addRef(dictOf(doc.resolve(lastPageNum, prev)?.value)?.map.get('Annots'), lastPageNum, true);
  }
  if (duplicate) return 'one object plays several of the roles the signer rewrites';

  // Numbers the update may allocate: above everything the previous revisions declared.
  let maxPrev = 0;
  for (let r = 0; r <= prev; r++) for (const n of doc.revisions[r]!.entries.keys()) maxPrev = Math.max(maxPrev, n);
  const size = doc.trailerAt(prev)?.map.get('Size');
  if (typeof size === 'number') maxPrev = Math.max(maxPrev, size - 1);
  const isNew = (v: PdfValue) => isRef(v) && v.num > maxPrev;

  const added: number[] = [];
  for (const [num, entry] of revision.entries) {
    const a = doc.resolve(num, prev);
    if (entry.type === 0) {
      if (a) return `the update deletes object ${num}`;
      continue;
    }
    const b = doc.resolve(num, rev);
    if (!b || b.declaredNum !== num) return `object ${num} does not resolve to its own body`;
    if (entry.type === 1 && (b.offset === undefined || b.offset < prevEnd || b.offset >= revision.end))
      return `object ${num}'s body lies outside the update`;
    if (entry.type === 2 && doc.entryAt(entry.stream, rev)?.revision !== rev) return `object ${num} is in an object stream of another revision`;
    if (!a) {
      if (num <= maxPrev) return `object ${num} reuses a number the earlier revisions declared`;
      added.push(num);
      continue;
    }
    if (!rewritable.has(num) && !sameValue(doc.buf, a.value, b.value)) return `the update changes existing object ${num}`;
  }
  for (const an of doc.anomalies) {
    if (an.revision === rev && DISQUALIFYING_ANOMALIES.has(an.code)) return `${an.code} in the update`;
  }

  // Catalog: only /Names (its /EmbeddedFiles), /AF and /AcroForm may differ.
  const catChanged = changedKeys(doc, catA, catB);
  const odd = catChanged.filter((k) => !['Names', 'AF', 'AcroForm'].includes(k));
  if (odd.length) return `the catalog changes ${odd.join(', ')}`;
  const namesA = doc.dictAt(catA.map.get('Names'), prev);
  const namesB = doc.dictAt(catB.map.get('Names'), rev);
  if (namesA && !namesB) return 'the name dictionary was removed';
  if (namesB) {
    const names = changedKeys(doc, namesA, namesB);
    if (names.some((k) => k !== 'EmbeddedFiles')) return `the name dictionary changes ${names.join(', ')}`;
  }
  const afProblem = appendedOnly(doc, catA.map.get('AF'), prev, catB.map.get('AF'), rev, isNew, 'AF');
  if (afProblem) return afProblem;
  const formA = doc.dictAt(catA.map.get('AcroForm'), prev);
  const formB = doc.dictAt(catB.map.get('AcroForm'), rev);
  if (formA && !formB) return 'the form dictionary was removed';
  if (formB) {
    const form = changedKeys(doc, formA, formB);
    const oddForm = form.filter((k) => !['Fields', 'SigFlags', 'DR', 'DA'].includes(k));
    if (oddForm.length) return `the form dictionary changes ${oddForm.join(', ')}`;
    const fieldsProblem = appendedOnly(
      doc,
      formA?.map.get('Fields'),
      prev,
      formB.map.get('Fields'),
      rev,
      (v) => isNew(v) && isSignatureField(doc, v, rev),
      'Fields',
    );
    if (fieldsProblem) return fieldsProblem;
  }

  // Page tree root: kids appended at the end (new objects), /Count raised by as many pages.
  const pagesB = doc.dictAt(catB.map.get('Pages'), rev);
  if (!pagesA || !pagesB) return 'no page tree';
  const pagesChanged = changedKeys(doc, pagesA, pagesB);
  if (pagesChanged.some((k) => k !== 'Kids' && k !== 'Count')) return `the page tree root changes ${pagesChanged.join(', ')}`;
  const kidsProblem = appendedOnly(doc, pagesA.map.get('Kids'), prev, pagesB.map.get('Kids'), rev, isNew, 'Kids');
  if (kidsProblem) return kidsProblem;
  const kidsA = doc.deref(pagesA.map.get('Kids'), prev);
  const kidsB = doc.deref(pagesB.map.get('Kids'), rev);
  const appended = (Array.isArray(kidsB) ? kidsB.length : 0) - (Array.isArray(kidsA) ? kidsA.length : 0);
  const countA = pagesA.map.get('Count');
  const countB = pagesB.map.get('Count');
  if (typeof countA !== 'number' || typeof countB !== 'number' || countB - countA !== appended)
    return 'the page tree /Count does not match the pages appended';

  // The last page of the previous revision may gain the signature widget, nothing else.
  if (lastPageNum !== undefined) {
    const pA = dictOf(doc.resolve(lastPageNum, prev)?.value);
    const pB = dictOf(doc.resolve(lastPageNum, rev)?.value);
    if (!pA || !pB) return 'the last page is unreadable';
    const pageChanged = changedKeys(doc, pA, pB);
    if (pageChanged.some((k) => k !== 'Annots')) return `the last page changes ${pageChanged.join(', ')}`;
    const annotsProblem = appendedOnly(
      doc,
      pA.map.get('Annots'),
      prev,
      pB.map.get('Annots'),
      rev,
      (v) => isNew(v) && isInvisibleSignatureWidget(doc, v, rev),
      'Annots',
    );
    if (annotsProblem) return annotsProblem;
  }

  // New objects must not be reached from content that predates the update (a dangling reference in signed
  // content would otherwise come to life): not from the rewritten objects as they were, nor from any other.
  const addedSet = new Set(added);
  for (const num of rewritable.keys()) {
    let dangling: number | undefined;
    collectRefs(doc.resolve(num, prev)?.value, (n) => {
      if (addedSet.has(n)) dangling = n;
    });
    if (dangling !== undefined) return `object ${dangling} added by the update was already referenced by object ${num}`;
  }
  const index = referrers();
  for (const n of sharedArrays) {
    if (!revision.entries.has(n)) continue;
    for (const r of index.get(n) ?? []) {
      const defined = doc.entryAt(r, doc.last)?.revision;
      if (r !== rewritable.get(n) && defined !== undefined && defined < rev)
        return `the array ${n} rewritten by the update is shared with object ${r}`;
    }
  }
  for (const n of added) {
    for (const r of index.get(n) ?? []) {
      const defined = doc.entryAt(r, doc.last)?.revision;
      if (defined !== undefined && defined < rev) return `object ${n} added by the update is referenced by earlier object ${r}`;
    }
  }
  return undefined;
}

/**
 * Keys whose values differ, comparing direct values (references by number): a referent that the update
 * rewrote is either one of the rewritable objects, validated on its own, or makes the update fail above.
 */
function changedKeys(doc: PdfDocument, a: PdfDict | undefined, b: PdfDict): string[] {
  return differingKeys(doc.buf, a, b);
}

/** `b` is `a` (or nothing) with references to new objects appended at the end. */
function appendedOnly(
  doc: PdfDocument,
  aRaw: PdfValue | undefined,
  aRev: number,
  bRaw: PdfValue | undefined,
  bRev: number,
  isNew: (v: PdfValue) => boolean,
  what: string,
): string | undefined {
  const a = doc.deref(aRaw, aRev);
  const b = doc.deref(bRaw, bRev);
  if (a === undefined && b === undefined) return undefined;
  if (a !== undefined && !Array.isArray(a)) return `/${what} was not an array`;
  if (!Array.isArray(b)) return `/${what} is not an array`;
  const before = a ?? [];
  if (b.length < before.length) return `/${what} lost entries`;
  for (let i = 0; i < before.length; i++) if (!sameValue(doc.buf, before[i]!, b[i]!)) return `/${what} changes existing entries`;
  for (let i = before.length; i < b.length; i++) if (!isNew(b[i]!)) return `/${what} gains an entry that is not a new object of the expected kind`;
  return undefined;
}

/** A signature field (or its widget, whose parent is one). */
function isSignatureField(doc: PdfDocument, v: PdfValue, rev: number): boolean {
  const d = doc.dictAt(v, rev);
  if (!d) return false;
  return isName(d.map.get('FT'), 'Sig') || isName(doc.dictAt(d.map.get('Parent'), rev)?.map.get('FT'), 'Sig');
}

/** What the signer adds to an existing page: its signature widget, drawing nothing over the signed page. */
function isInvisibleSignatureWidget(doc: PdfDocument, v: PdfValue, rev: number): boolean {
  const d = doc.dictAt(v, rev);
  return !!d && isName(d.map.get('Subtype'), 'Widget') && isSignatureField(doc, v, rev) && !hasVisibleAppearance(doc, d, rev);
}
