/**
 * Folio's signer embeds its audit data as `audit-trail.json` in the catalog's /Names /EmbeddedFiles tree
 * (format "folio-audit-trail/1"; name, format and record type are defined once in
 * src/pdf/audit-trail-format.ts). The verifier returns it with `hashMatches`: the SHA-256 of the first `pdfLength` bytes equals `pdfSha256`, and `pdfLength` ends a revision, i.e. the audit data describes the
 * very bytes the signature was appended to.
 */
import crypto from 'node:crypto';
import { AUDIT_TRAIL_FILE_NAME, decodePdfText, isName, parseAuditRecord, isString, isStream, type PdfDocument, type PdfValue } from '../pdf/index.js';

const MAX_AUDIT_BYTES = 5 * 1024 * 1024;
/** More events than the signer ever writes (its API takes far fewer per request). */
export const MAX_AUDIT_EVENTS = 100_000;
/** Folio writes the record three levels deep plus the caller's event data; the answer is re-serialised. */
export const MAX_AUDIT_DEPTH = 64;

/** True when the JSON text nests arrays/objects deeper than `max` (a linear scan, strings skipped). */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export interface AuditTrailAnswer {
  [key: string]: unknown;
  hashMatches: boolean;
  /**
   * The same audit file is inside the bytes of an intact signature covering a whole revision; false when it
   * was added or replaced afterwards (a forged audit trail can always make its own hash match).
   */
  coveredBySignature: boolean;
}

/** The embedded audit file's JSON text as of a revision, or undefined. */
export function auditTrailText(doc: PdfDocument, rev: number): string | undefined {
  const last = rev;
  const names = doc.dictAt(doc.catalogAt(last)?.map.get('Names'), last);
  const tree = doc.dictAt(names?.map.get('EmbeddedFiles'), last);
  if (!tree) return undefined;
  const spec = findInNameTree(doc, tree, AUDIT_TRAIL_FILE_NAME, 0, rev);
  const fileSpec = doc.dictAt(spec, last);
  const ef = doc.dictAt(fileSpec?.map.get('EF'), last);
  const stream = doc.deref(ef?.map.get('F') ?? ef?.map.get('UF'), last);
  if (!isStream(stream)) return undefined;
  try {
    return Buffer.from(doc.decode(stream, MAX_AUDIT_BYTES)).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Folio's audit JSON at the final revision with hashMatches; `coveredRevisions` are intact signed revisions. */
export function readAuditTrail(doc: PdfDocument, coveredRevisions: number[]): AuditTrailAnswer | undefined {
  const text = auditTrailText(doc, doc.last);
  if (text === undefined) return undefined;
  // A document can embed anything under the audit file's name: JSON nested deep enough to overflow the
  // stack of whoever serialises the answer, or millions of events, is not Folio's audit record.
  if (nestsDeeperThan(text, MAX_AUDIT_DEPTH)) return undefined;
  const parsed = parseAuditRecord(text);
  if ('problem' in parsed) return undefined;
  const json = parsed.record;
  if (Array.isArray(json.auditTrail) && json.auditTrail.length > MAX_AUDIT_EVENTS) return undefined;
  const len = json.pdfLength;
  const expected = json.pdfSha256;
  let hashMatches = false;
  if (typeof len === 'number' && Number.isInteger(len) && len > 0 && len <= doc.buf.length && typeof expected === 'string') {
    const atBoundary = doc.revisions.some((r) => r.end === len || (r.end > len && r.end - len <= 2 && /^[\r\n]*$/.test(doc.latin1(len, r.end))));
    const actual = crypto.createHash('sha256').update(doc.buf.subarray(0, len)).digest('hex');
    hashMatches = atBoundary && actual === expected.toLowerCase();
  }
  const coveredBySignature = coveredRevisions.some((r) => auditTrailText(doc, r) === text);
  return { ...json, hashMatches, coveredBySignature };
}

function findInNameTree(doc: PdfDocument, node: { map: Map<string, PdfValue> }, wanted: string, depth: number, rev: number): PdfValue | undefined {
  if (depth > 16) return undefined;
  const last = rev;
  const names = doc.deref(node.map.get('Names'), last);
  if (Array.isArray(names)) {
    for (let i = 0; i + 1 < names.length; i += 2) {
      const key = doc.deref(names[i], last);
      if (isString(key) && decodePdfText(key.bytes) === wanted) return names[i + 1];
      // Some writers key by the spec's /UF instead of the tree key: check the spec too.
      const spec = doc.dictAt(names[i + 1], last);
      const uf = doc.deref(spec?.map.get('UF') ?? spec?.map.get('F'), last);
      if (isString(uf) && decodePdfText(uf.bytes) === wanted && isName(spec?.map.get('Type'), 'Filespec')) return names[i + 1];
    }
  }
  const kids = doc.deref(node.map.get('Kids'), last);
  if (Array.isArray(kids)) {
    for (const k of kids.slice(0, 1000)) {
      const kd = doc.dictAt(k, last);
      if (!kd) continue;
      const found = findInNameTree(doc, kd, wanted, depth + 1, rev);
      if (found) return found;
    }
  }
  return undefined;
}
