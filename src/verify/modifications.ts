/**
 * Modification analysis: what changed between the revision a signature covers and the final revision, with
 * pyHanko's semantics (its `diff_analysis`): every object a later revision defines must be explained by a
 * rule, and a rule explains the rewrite of an object the signed revision already had only along the
 * reference paths it checked — every site from which that object was reachable in the signed revision must
 * be one the rule permits (rules/paths.ts over usages.ts), else the rewrite is OTHER.
 *
 * Objects are compared *as resolved* at both revisions (not by looking only at new bodies), so an update that
 * merely re-points an xref entry to an older planted body (hide-and-replace), maps a number to a body
 * declaring another number (hide), empties a widget to `<< >>`, or reuses an object of the signed revision as
 * something else (a string as the DSS: pyHanko's `safe_whitelist`) is seen. Each difference gets a level in
 * pyHanko's terms; objects without a role of their own (streams, fonts, arrays) take the level of whatever
 * uses them at the final revision (through role-less dictionaries and arrays that did not change, and by key
 * for the catalog), so an appearance stream shared with page content is "OTHER".
 */
import {
  isDict,
  isName,
  isRef,
  isStream,
  sameValue,
  dictOf,
  type PdfDict,
  type PdfDocument,
  type PdfValue,
  type ResolvedObject,
} from '../pdf/index.js';
import type { SignatureFields } from './signatures.js';
import { pathsTo, Usages } from './usages.js';
import { sharedAppearanceDictionary, unexplainedUse, type PathContext, type PathKind } from './rules/paths.js';
import { AUDIT_REVISION_DETAIL, STRUCTURAL_ANOMALIES } from './audit-revision.js';
import { judgeInfo, judgeXmp } from './rules/metadata.js';
import { catalogProblem, extensionsLevel } from './rules/catalog.js';
import { trailerChanges } from './rules/trailer.js';
import { fieldValueChanged } from './rules/form.js';
import { judgeAnnotation } from './rules/annotations.js';
import { dssChanges, judgeDss } from './rules/dss.js';
import { judgePageTree } from './rules/pages.js';
import { changedKeys, fieldName, hasRealContents, isEmptyValue, isInfoLike } from './rules/shared.js';
import { LTA_ACROFORM_KEYS, LTA_CATALOG_KEYS, isDocTimestampDict, onlyDocTimestampsAdded } from './rules/lta.js';
import { classifySigField } from './rules/signature-field.js';
import { lazyReferrerIndex, type ReferrerIndex } from './referrers.js';

/**
 * METADATA (a new /Info or a changed XMP /Metadata stream) is never permitted after signing: no DocMDP level
 * allows it, so it ranks above the levels DocMDP can permit and below OTHER.
 */
export type ModificationLevel = 'NONE' | 'SIGNATURES_ONLY' | 'FORM_FILL' | 'ANNOTATIONS' | 'METADATA' | 'OTHER';
const RANK: Record<ModificationLevel, number> = { NONE: 0, SIGNATURES_ONLY: 1, FORM_FILL: 2, ANNOTATIONS: 3, METADATA: 4, OTHER: 5 };
export const maxLevel = (a: ModificationLevel, b: ModificationLevel): ModificationLevel => (RANK[a] >= RANK[b] ? a : b);
export const levelRank = (l: ModificationLevel) => RANK[l];

export interface ModificationDetail {
  object?: number;
  /** 1-based revision that made the change. */
  revision?: number;
  kind: 'added' | 'changed' | 'deleted' | 're-pointed' | 'emptied' | 'structure';
  level: ModificationLevel;
  issue: string;
  /** Visible annotation / unsigned signature appearance: never permitted, whatever DocMDP allows. */
  attack?: 'EVIL_ANNOTATION' | 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE';
  /** Field name for form-fill changes (FieldMDP). */
  field?: string;
  /** Part of a long-term-validation update (DSS, document timestamp, metadata bookkeeping): DocMDP P=1 permits it. */
  ltaUpdate?: boolean;
}

export interface ModificationResult {
  level: ModificationLevel;
  details: ModificationDetail[];
}

type Role =
  | 'sig'
  | 'sigfield'
  | 'formfield'
  | 'fieldnode'
  | 'annot'
  | 'catalog'
  | 'acroform'
  | 'page'
  | 'pages'
  | 'info'
  | 'metadata'
  | 'structure'
  | 'dss'
  | 'other';

const MAX_INDEX_OBJECTS = 300_000;
const ALLOWED_REFERRERS: Partial<Record<Role, Role[]>> = {
  sig: ['sigfield', 'catalog'],
  sigfield: ['page', 'acroform', 'catalog', 'sigfield', 'fieldnode'],
  formfield: ['page', 'acroform', 'catalog', 'formfield', 'fieldnode'],
  fieldnode: ['acroform', 'catalog', 'fieldnode'],
  annot: ['page', 'annot'],
  dss: ['catalog', 'dss'],
  metadata: ['catalog'],
  info: [],
};
const ROLE_LABEL: Record<Role, string> = {
  sig: 'signature dictionary',
  sigfield: 'signature field',
  formfield: 'form field',
  fieldnode: 'field holding fields',
  annot: 'annotation',
  catalog: 'catalog',
  acroform: 'form dictionary',
  page: 'page',
  pages: 'page tree node',
  info: 'document information',
  metadata: 'metadata stream',
  structure: 'xref/object stream',
  dss: 'validation data',
  other: 'content',
};
/** Records one modification detail (the analyzer's callback to its classifiers). */
export type PushDetail = (
  it: { num: number; rev: number },
  kind: ModificationDetail['kind'],
  level: ModificationLevel,
  issue: string,
  extra?: Partial<ModificationDetail>,
) => void;

const lta = (yes: boolean): Partial<ModificationDetail> => (yes ? { ltaUpdate: true } : {});

/**
 * The reference-path rule that judges a rewrite of an object of each role (rules/paths.ts); the catalog, pages,
 * signature dictionaries and xref/object streams are approved wholesale, as pyHanko does.
 */
const PATH_KIND: Partial<Record<Role, PathKind>> = {
  acroform: 'acroform',
  info: 'info',
  metadata: 'metadata',
  dss: 'dss',
  sigfield: 'field',
  formfield: 'field',
  fieldnode: 'field',
  annot: 'annot',
  other: 'other',
};
/** Catalog entries through which an object without a role of its own is part of signing (see levelOf). */
const SIGNING_CATALOG_KEYS = new Set(['Extensions', 'AcroForm', 'DSS', 'Metadata']);

type DssPart = 'list' | 'vri' | 'entry';
/** DSS entries that hold arrays of streams, in the store and in a VRI entry. */
const DSS_LISTS = ['Certs', 'OCSPs', 'CRLs', 'Cert', 'OCSP', 'CRL'];
const MAX_DSS_PARTS = 30_000;

/** The indirect parts of a DSS as of the final revision: where its lists, /VRI and VRI entries are objects. */
function dssPartsOf(doc: PdfDocument, dssRaw: PdfValue | undefined): Map<number, DssPart> {
  const parts = new Map<number, DssPart>();
  const last = doc.last;
  const lists = (d: PdfDict | undefined) => {
    for (const k of DSS_LISTS) {
      const v = d?.map.get(k);
      if (isRef(v) && Array.isArray(doc.resolve(v.num, last)?.value)) parts.set(v.num, 'list');
    }
  };
  const dss = doc.dictAt(dssRaw, last);
  lists(dss);
  const vriRaw = dss?.map.get('VRI');
  if (isRef(vriRaw)) parts.set(vriRaw.num, 'vri');
  for (const v of doc.dictAt(vriRaw, last)?.map.values() ?? []) {
    if (parts.size > MAX_DSS_PARTS) break;
    if (isRef(v) && !isStream(doc.resolve(v.num, last)?.value)) parts.set(v.num, 'entry');
    lists(doc.dictAt(v, last));
  }
  return parts;
}

const isStructureStream = (v: PdfValue | undefined) =>
  isStream(v) && (isName(v.dict.map.get('Type'), 'XRef') || isName(v.dict.map.get('Type'), 'ObjStm'));

/** The kind of a value, for objects of the signed revision reused as something else. */
function kindOf(v: PdfValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? v.kind : typeof v;
}

export class ModificationAnalyzer {
  private referrers?: ReferrerIndex;
  private readonly roleCache = new Map<number, Role>();
  private readonly catalogNum?: number;
  private readonly acroFormNum?: number;
  private readonly infoNum?: number;
  private readonly dssNum?: number;
  private readonly metadataNum?: number;

  constructor(
    private readonly doc: PdfDocument,
    private readonly fields: SignatureFields,
  ) {
    const last = doc.last;
    const trailer = doc.trailerAt(last);
    const root = trailer?.map.get('Root');
    this.catalogNum = isRef(root) ? root.num : undefined;
    const info = trailer?.map.get('Info');
    this.infoNum = isRef(info) ? info.num : undefined;
    const cat = doc.catalogAt(last);
    const af = cat?.map.get('AcroForm');
    this.acroFormNum = isRef(af) ? af.num : undefined;
    const dss = cat?.map.get('DSS');
    this.dssNum = isRef(dss) ? dss.num : undefined;
    const meta = cat?.map.get('Metadata');
    this.metadataNum = isRef(meta) ? meta.num : undefined;
    this.dssParts = dssPartsOf(doc, dss);
  }

  /** The indirect parts of the final DSS (arrays, the /VRI dictionary, VRI entries and their arrays). */
  private readonly dssParts: ReadonlyMap<number, DssPart>;

  private readonly usages = new Map<number, Usages>();

  /** Where each object is used as of revision `rev` (reachable from its trailer; usages.ts), built on demand. */
  usagesAt(rev: number): Usages {
    let u = this.usages.get(rev);
    if (!u) this.usages.set(rev, (u = new Usages(this.doc, rev, () => this.referrerIndex())));
    return u;
  }

  private pathContext(rev: number): PathContext {
    return { doc: this.doc, rev, usages: this.usagesAt(rev), filled: (n) => fieldValueChanged(this.doc, n, rev) };
  }

  /** Who refers to each object at the final revision (built once, bounded; referrers.ts). */
  referrerIndex(): ReferrerIndex {
    if (this.referrers) return this.referrers;
    const nums = new Set<number>();
    for (const r of this.doc.revisions) for (const n of r.entries.keys()) nums.add(n);
    this.referrers = lazyReferrerIndex(this.doc, nums, MAX_INDEX_OBJECTS);
    return this.referrers;
  }

  private role(num: number, value: PdfValue | undefined): Role {
    const hit = this.roleCache.get(num);
    if (hit) return hit;
    const r = this.computeRole(num, value);
    this.roleCache.set(num, r);
    return r;
  }

  private computeRole(num: number, value: PdfValue | undefined): Role {
    // Roles that excuse a change are only given to objects of the right shape: a stream is never a signature,
    // field, annotation, page or info dictionary (else a changed content stream could pose as one).
    const stream = isStream(value);
    const d = dictOf(value);
    const type = d?.map.get('Type');
    const typeName = isName(type) ? type.name : undefined;
    if (stream) {
      if (typeName === 'XRef' || typeName === 'ObjStm') return 'structure';
      // The catalog's /Metadata is judged as XMP whatever its /Type says (an in-place rewrite included).
      if (num === this.metadataNum) return 'metadata';
      return 'other';
    }
    if (this.dssParts.has(num)) return 'dss';
    if (!d) return 'other';
    if (num === this.catalogNum) return 'catalog';
    if (num === this.acroFormNum) return 'acroform';
    if (num === this.infoNum && isInfoLike(d)) return 'info';
    if (num === this.dssNum) return 'dss';
    if (this.fields.sigFieldNums.has(num)) return 'sigfield';
    if (this.fields.formFieldNums.has(num)) return 'formfield';
    if (this.fields.fieldNodeNums.has(num)) return 'fieldnode';
    if (d.map.has('ByteRange') || typeName === 'Sig' || typeName === 'DocTimeStamp') return 'sig';
    if (typeName === 'Catalog') return 'catalog';
    if (typeName === 'Page') return 'page';
    if (typeName === 'Pages') return 'pages';
    if (d.map.has('FT')) return isName(d.map.get('FT'), 'Sig') ? 'sigfield' : 'formfield';
    const sub = d.map.get('Subtype');
    if (isName(sub) && d.map.has('Rect') && (typeName === 'Annot' || typeName === undefined)) {
      if (sub.name === 'Widget') {
        const parent = this.doc.dictAt(d.map.get('Parent'), this.doc.last);
        return isName(parent?.map.get('FT'), 'Sig') ? 'sigfield' : 'formfield';
      }
      return 'annot';
    }
    if (typeName === 'VRI' || d.map.has('VRI') || d.map.has('OCSPs') || d.map.has('CRLs')) return 'dss';
    return 'other';
  }

  /**
   * Who may refer to an object of each role. A role only excuses a change when the object is used as such:
   * a "signature dictionary" referenced from a page, or an "annotation" filling a dangling reference of signed
   * page content, is an attempt to pass content changes off as signatures or annotations.
   */
  private readonly misuse = new Map<string, string | undefined>();

  private misusedAs(num: number, role: Role): string | undefined {
    // Depends only on the final revision: asked again for every signature before the change, answered once.
    const key = `${num}|${role}`;
    if (this.misuse.has(key)) return this.misuse.get(key);
    const answer = this.findMisuse(num, role);
    this.misuse.set(key, answer);
    return answer;
  }

  private findMisuse(num: number, role: Role): string | undefined {
    const allowed = ALLOWED_REFERRERS[role];
    if (!allowed) return undefined;
    const refs = this.referrerIndex().get(num);
    const now = this.usagesAt(this.doc.last);
    for (const r of refs ?? []) {
      // An object nothing reachable refers to uses nothing (pyHanko counts paths from the trailer only).
      if (r === num || !now.reachable(r)) continue;
      for (const [via, rRole] of this.usersOf(r, 0)) {
        if (!allowed.includes(rRole) && rRole !== 'structure')
          return `object ${num} looks like a ${ROLE_LABEL[role]} but is used by object ${via} (${ROLE_LABEL[rRole]})`;
      }
    }
    return undefined;
  }

  /** The role of a referrer; an indirect array (an /Annots or /Fields list) stands for whoever refers to it. */
  private usersOf(r: number, depth: number): Array<[number, Role]> {
    const value = this.doc.resolve(r, this.doc.last)?.value;
    if (Array.isArray(value) && depth < 3) {
      const out: Array<[number, Role]> = [];
      for (const u of this.referrerIndex().get(r) ?? []) if (u !== r) out.push(...this.usersOf(u, depth + 1));
      return out;
    }
    return [[r, this.role(r, value)]];
  }

  /**
   * `auditRevisions` (0-based) are Folio audit revisions (see audit-revision.ts): what they define is
   * reported once as SIGNATURES_ONLY, and an object they rewrote is judged stretch by stretch between them
   * (each change by the revisions that made it), so a change made by any other revision is still seen and
   * the audit revision's own change is not charged to a DSS or timestamp revision after it.
   */
  analyze(fromRev: number, signedEnd: number, auditRevisions: ReadonlySet<number> = new Set()): ModificationResult {
    const doc = this.doc;
    const last = doc.last;
    const details: ModificationDetail[] = [];
    if (fromRev >= last) return { level: 'NONE', details };
    for (const r of [...auditRevisions].sort((x, y) => x - y)) {
      if (r > fromRev) details.push({ revision: r, kind: 'added', level: 'SIGNATURES_ONLY', issue: AUDIT_REVISION_DETAIL });
    }
    /** One change of an object: from its state at `aRev` to its state at `bRev` (0-based), last made by `rev`. */
    type Item = { num: number; a?: ResolvedObject; b?: ResolvedObject; rev: number; aRev: number; bRev: number };
    // The last change of each object (what the role-less objects' referrer analysis looks up), and every change.
    const items = new Map<number, Item>();
    const changes: Item[] = [];
    for (const num of doc.numbersChangedAfter(fromRev)) {
      // Without audit revisions an object's change is judged from the signed revision to the final one. What
      // audit revisions define is exempt; the changes other revisions make are judged in the stretches between
      // the audit revisions that rewrote the object (before the first, between two, after the last), each
      // against the state the stretch started from, so they are never folded into an exemption, and a change
      // made by an exempt revision (the /Names, /AF and /AcroForm of a later Folio signature's catalog) is
      // never attributed to the DSS or timestamp revision that rewrites the same object afterwards.
      const defs = auditRevisions.size > 0 ? doc.definitionsOf(num).filter((r) => r > fromRev && r <= last) : [];
      const audits = defs.filter((r) => auditRevisions.has(r));
      const stretches: Array<[number, number]> = [];
      if (audits.length === 0) stretches.push([fromRev, last]);
      else {
        let start = fromRev;
        for (const au of [...audits, last + 1]) {
          const end = au - 1;
          if (defs.some((r) => r > start && r <= end)) stretches.push([start, end]);
          start = au;
        }
      }
      for (const [aRev, bRev] of stretches) {
        const b = doc.resolve(num, bRev);
        const rev = audits.length === 0 ? (doc.entryAt(num, last)?.revision ?? last) : defs.filter((r) => r > aRev && r <= bRev).pop()!;
        const a = doc.resolve(num, aRev);
        if (!a && !b) continue;
        if (a && b && a.entry === b.entry) continue;
        if (a && b && b.declaredNum === num && b.offset === a.offset && b.entry.type === 1 && a.entry.type === 1) continue;
        if (a && b && b.declaredNum === num && sameValue(doc.buf, a.value, b.value)) {
          if (b.offset !== undefined && b.offset < signedEnd && b.offset !== a.offset) {
            details.push({
              object: num,
              revision: rev,
              kind: 're-pointed',
              level: 'OTHER',
              issue: `object ${num} now resolves to an older body at offset ${b.offset} inside the signed bytes`,
            });
          }
          continue;
        }
        const item = { num, a, b, rev, aRev, bRev };
        items.set(num, item);
        changes.push(item);
      }
    }

    details.push(...trailerChanges(doc, fromRev, this.infoAt(fromRev)));
    details.push(...dssChanges(doc, fromRev));

    const levels = new Map<number, ModificationLevel>();
    const deferred: Item[] = [];
    // Per object: whether all its details belong to a long-term-validation update.
    const ltaNums = new Map<number, boolean>();
    const push = (
      it: { num: number; rev: number },
      kind: ModificationDetail['kind'],
      level: ModificationLevel,
      issue: string,
      extra: Partial<ModificationDetail> = {},
    ) => {
      levels.set(it.num, maxLevel(levels.get(it.num) ?? 'NONE', level));
      ltaNums.set(it.num, (ltaNums.get(it.num) ?? true) && !!extra.ltaUpdate && level === 'SIGNATURES_ONLY');
      details.push({ object: it.num, revision: it.rev, kind, level, issue, ...extra });
    };

    for (const it of changes) {
      const { num, a, b } = it;
      if (!b) {
        push(it, 'deleted', 'OTHER', `object ${num} was deleted`);
        continue;
      }
      if (b.declaredNum !== num) {
        push(it, 're-pointed', 'OTHER', `the xref maps object ${num} to a body that declares itself ${b.declaredNum} 0 obj`);
        continue;
      }
      if (a && b.offset !== undefined && b.offset < signedEnd && b.offset !== a.offset) {
        push(it, 're-pointed', 'OTHER', `object ${num} was re-pointed to a different body at offset ${b.offset} inside the signed bytes`);
        continue;
      }
      if (a && isEmptyValue(b.value) && !isEmptyValue(a.value)) {
        push(it, 'emptied', 'OTHER', `object ${num} was emptied`);
        continue;
      }
      if (a && a.value !== null && kindOf(a.value) !== kindOf(b.value)) {
        // pyHanko's safe_whitelist: an object of the signed revision may be updated, not reused as something else.
        push(it, 're-pointed', 'OTHER', `object ${num}, a ${kindOf(a.value)} in the signed revision, was reused as a ${kindOf(b.value)}`);
        continue;
      }
      let role = this.role(num, b.value);
      // An xref or object stream is bookkeeping only when new: one written over an object of the signed revision
      // is judged as what it replaced (its bytes may still be drawn or read as that object).
      if (role === 'structure' && a && !isStructureStream(a.value)) role = 'other';
      const kind = a ? 'changed' : 'added';
      const misuse = this.misusedAs(num, role);
      if (misuse) {
        push(it, kind, 'OTHER', misuse);
        continue;
      }
      // Reference paths: a rewrite of an object the signed revision had is explained only along the sites the
      // rule for its role checked (rules/paths.ts).
      const pathKind = a ? PATH_KIND[role] : undefined;
      if (pathKind) {
        const use = unexplainedUse(this.pathContext(it.aRev), num, pathKind);
        if (use) {
          const what = role === 'other' ? (isStream(b.value) ? 'stream' : 'object') : ROLE_LABEL[role];
          push(it, kind, 'OTHER', `${what} ${num} of the signed revision was rewritten, but it is also used at ${use}`);
          continue;
        }
      }
      if (a && (role === 'sigfield' || role === 'formfield') && this.appearanceChanged(it)) {
        const shared = sharedAppearanceDictionary(this.pathContext(it.aRev), num);
        if (shared) {
          push(it, kind, 'OTHER', `the appearance of ${ROLE_LABEL[role]} ${fieldName(doc, b.value) ?? num} changed, but ${shared}`);
          continue;
        }
      }
      switch (role) {
        case 'structure':
          continue;
        case 'sig': {
          const wasSigned = a && isDict(a.value) && a.value.map.has('ByteRange') && hasRealContents(a.value);
          if (wasSigned) push(it, kind, 'OTHER', `the signature dictionary ${num} of an earlier signature was changed`);
          else push(it, kind, 'SIGNATURES_ONLY', `signature dictionary ${num} ${kind}`, lta(isDocTimestampDict(dictOf(b.value))));
          break;
        }
        case 'dss': {
          const part = this.dssParts.get(num);
          // The DSS's lists and /VRI dictionary: their content is the DSS rule's (dssChanges, once per analysis).
          const j =
            part === 'list' || part === 'vri'
              ? { level: 'SIGNATURES_ONLY' as const, issue: `validation data (DSS ${part === 'vri' ? '/VRI' : 'array'}) ${kind}` }
              : judgeDss(b.value, num === this.dssNum, kind);
          push(it, kind, j.level, j.issue, lta(j.level === 'SIGNATURES_ONLY'));
          break;
        }
        case 'info': {
          const j = judgeInfo(doc.buf, this.infoAt(fromRev), dictOf(b.value));
          push(
            it,
            kind,
            j.level,
            `document information dictionary ${kind}${j.what.length ? ` (${j.what.join(', ')})` : ' (bookkeeping only)'}`,
            lta(j.level === 'SIGNATURES_ONLY'),
          );
          break;
        }
        case 'metadata': {
          const j = this.judgeXmpAt(fromRev);
          push(
            it,
            kind,
            j.level,
            `XMP metadata stream ${kind}${j.what.length ? ` (${j.what.join(', ')})` : ' (bookkeeping only)'}`,
            lta(j.level === 'SIGNATURES_ONLY'),
          );
          break;
        }
        case 'sigfield':
          classifySigField(doc, it, kind, push);
          break;
        case 'fieldnode': {
          // pyHanko: fields are created at the root of the form (signature fields) and filled; the fields a field
          // holds (its /Kids) stay as signed.
          const name = fieldName(doc, b.value) ?? String(num);
          if (!a) push(it, kind, 'OTHER', `a field holding fields (${name}) was added`);
          else {
            const changed = changedKeys(doc, a.value, b.value);
            push(
              it,
              kind,
              'OTHER',
              changed.includes('Kids') ? `fields were added to or removed from field ${name}` : `field ${name} changed (${changed.join(', ')})`,
            );
          }
          break;
        }
        case 'formfield': {
          if (!a) {
            push(it, kind, 'OTHER', `form field ${num} added`);
            break;
          }
          const changed = changedKeys(doc, a.value, b.value);
          const name = fieldName(doc, b.value);
          if (!fieldValueChanged(this.doc, num, fromRev) && changed.every((k) => ['AP', 'AS', 'MK', 'DA', 'BS'].includes(k)))
            push(it, kind, 'ANNOTATIONS', `the appearance of form field ${name ?? num} changed while its value stays (${changed.join(', ')})`, {
              field: name,
            });
          else if (changed.every((k) => ['V', 'AP', 'AS', 'DV', 'MK', 'DA', 'BS', 'TU'].includes(k)))
            push(it, kind, 'FORM_FILL', `form field ${name ?? num} filled (${changed.join(', ')})`, { field: name });
          else push(it, kind, 'OTHER', `form field ${name ?? num} changed beyond its value (${changed.join(', ')})`);
          break;
        }
        case 'annot': {
          const j = judgeAnnotation(doc, num, kind, b.value);
          push(it, kind, j.level, j.issue, j.attack ? { attack: j.attack } : {});
          break;
        }
        case 'catalog': {
          if (!a) {
            push(it, kind, 'OTHER', 'a new document catalog was added');
            break;
          }
          const changed = changedKeys(doc, a.value, b.value);
          const aCat = dictOf(a.value);
          const bCat = dictOf(b.value);
          const problem = aCat && bCat ? catalogProblem(aCat, bCat, changed) : 'the catalog is not a dictionary';
          if (problem) {
            push(it, kind, 'OTHER', problem);
            break;
          }
          const added: number[] = [];
          let afLevel: ModificationLevel =
            changed.includes('AcroForm') && isDict(bCat!.map.get('AcroForm'))
              ? this.compareAcroForm(aCat!.map.get('AcroForm'), bCat!.map.get('AcroForm'), it.aRev, it.bRev, added)
              : 'SIGNATURES_ONLY';
          if (changed.includes('Metadata')) afLevel = maxLevel(afLevel, this.judgeXmpAt(fromRev).level);
          // Judged revision by revision, also when the endpoints agree (changed, then changed back).
          afLevel = maxLevel(afLevel, extensionsLevel(doc, fromRev));
          const ltaOk =
            afLevel === 'SIGNATURES_ONLY' &&
            changed.every((k) => LTA_CATALOG_KEYS.has(k)) &&
            (!changed.includes('AcroForm') || onlyDocTimestampsAdded(doc, added));
          push(it, kind, afLevel, `catalog updated (${changed.join(', ')})`, lta(ltaOk));
          break;
        }
        case 'acroform': {
          const added: number[] = [];
          const level = a ? this.compareAcroForm(a.value, b.value, it.aRev, it.bRev, added, LTA_ACROFORM_KEYS) : 'SIGNATURES_ONLY';
          push(it, kind, level, `interactive form dictionary ${kind}`, lta(!!a && level === 'SIGNATURES_ONLY' && onlyDocTimestampsAdded(doc, added)));
          break;
        }
        case 'page':
        case 'pages': {
          const added: number[] = [];
          const j = judgePageTree(doc, role, num, kind, a?.value, b.value, (x, y) => this.compareList(x, y, it.aRev, it.bRev, added));
          push(it, kind, j.level, j.issue, lta(j.level === 'SIGNATURES_ONLY' && onlyDocTimestampsAdded(doc, added)));
          break;
        }
        default:
          deferred.push(it);
      }
    }

    // Objects without a role of their own take the level of what uses them now.
    const index: ReferrerIndex = deferred.length ? this.referrerIndex() : new Map<number, Set<number>>();
    const catalogNow = this.catalogNum !== undefined ? doc.resolve(this.catalogNum, last)?.value : undefined;
    /** The catalog entries through which the catalog uses `num` now. */
    const catalogKeys = (num: number) => pathsTo(catalogNow, num).map((p) => String(p[0]));
    /** An unchanged dictionary or array without a role stands for whoever uses it (an /AP dictionary, a /Kids list). */
    const transparent = (r: number, role: Role) => role === 'other' && !isStream(doc.resolve(r, last)?.value);
    const visiting = new Set<number>();
    const levelOf = (num: number, origin: Item | undefined, depth = 0): ModificationLevel | undefined => {
      const known = levels.get(num);
      if (known) return known;
      if (visiting.has(num) || depth > 4) return undefined;
      visiting.add(num);
      const it = origin ?? items.get(num);
      const changedAt = (what: string, l: ModificationLevel) => {
        if (!it || l !== 'OTHER') return;
        details.push({
          object: it.num,
          revision: it.rev,
          kind: it.a ? 'changed' : 'added',
          level: 'OTHER',
          issue: `object ${it.num} ${it.a ? 'changed' : 'added'} after signing is used by unchanged signed content (${what})`,
        });
      };
      let level: ModificationLevel | undefined;
      for (const r of index.get(num) ?? []) {
        if (r === num) continue;
        let l: ModificationLevel | undefined;
        if (r === this.catalogNum) {
          // By entry: developer extensions, the form, the DSS and the XMP packet are what signing writes there.
          const keys = catalogKeys(num);
          if (keys.length === 0) continue;
          if (keys.every((k) => SIGNING_CATALOG_KEYS.has(k))) {
            l = items.has(r) ? (levelOf(r, undefined, depth + 1) ?? 'SIGNATURES_ONLY') : 'SIGNATURES_ONLY';
            if (keys.includes('Extensions')) l = maxLevel(l, extensionsLevel(doc, fromRev));
            if (keys.includes('Metadata')) l = maxLevel(l, this.judgeXmpAt(fromRev).level);
          } else if (items.has(r)) l = levelOf(r, undefined, depth + 1);
          else {
            l = 'OTHER';
            changedAt(`the catalog's /${keys.find((k) => !SIGNING_CATALOG_KEYS.has(k))}`, l);
          }
        } else if (items.has(r)) l = levelOf(r, undefined, depth + 1);
        else if (!this.usagesAt(last).reachable(r)) continue;
        else {
          const rValue = doc.resolve(r, last)?.value;
          const role = this.role(r, rValue);
          if (transparent(r, role)) {
            const through = levelOf(r, it, depth + 1);
            if (through) level = level ? maxLevel(level, through) : through;
            continue;
          }
          // Form default resources (/DR fonts) serve field and signature appearances only.
          // An appearance (or anything else) of a field reached through an indirect object changes with the
          // field's value only: re-pointing it while the value stays is the "sneaky" appearance variant.
          const still = (role === 'formfield' || role === 'sigfield') && !fieldValueChanged(this.doc, r, fromRev);
          if (still && it) {
            const name = fieldName(doc, rValue) ?? String(r);
            details.push({
              object: it.num,
              revision: it.rev,
              kind: it.a ? 'changed' : 'added',
              level: role === 'sigfield' ? 'OTHER' : 'ANNOTATIONS',
              issue: `object ${it.num} ${it.a ? 'changed' : 'added'} changes the appearance of ${role === 'sigfield' ? 'signature' : 'form'} field ${name} (object ${r}) while its value stays`,
            });
          }
          l = still
            ? role === 'sigfield'
              ? 'OTHER'
              : 'ANNOTATIONS'
            : role === 'sigfield' || role === 'sig' || role === 'dss' || role === 'acroform'
              ? 'SIGNATURES_ONLY'
              : role === 'formfield'
                ? 'FORM_FILL'
                : role === 'annot'
                  ? 'ANNOTATIONS'
                  : role === 'structure'
                    ? undefined
                    : 'OTHER';
          if (!still) changedAt(`object ${r}`, l ?? 'NONE');
        }
        if (l) level = level ? maxLevel(level, l) : l;
      }
      visiting.delete(num);
      return level;
    };
    // An object without a role is part of a long-term-validation update when everything that uses it is.
    const ltaVisiting = new Set<number>();
    const ltaOf = (num: number, depth = 0): boolean => {
      if (ltaNums.has(num)) return ltaNums.get(num)!;
      if (ltaVisiting.has(num) || depth > 4) return false;
      ltaVisiting.add(num);
      const refs = [...(index.get(num) ?? [])].filter((r) => r !== num);
      const ok =
        refs.length > 0 &&
        refs.every((r) => {
          if (r === this.catalogNum) {
            const keys = catalogKeys(num);
            return keys.every((k) => k === 'Extensions' || k === 'DSS') && (!items.has(r) || ltaOf(r, depth + 1));
          }
          if (items.has(r)) return ltaOf(r, depth + 1);
          const role = this.role(r, doc.resolve(r, last)?.value);
          return role === 'dss' || (transparent(r, role) && ltaOf(r, depth + 1));
        });
      ltaVisiting.delete(num);
      if (items.has(num)) ltaNums.set(num, ok);
      return ok;
    };
    for (const it of deferred) {
      const level = levelOf(it.num, undefined) ?? 'NONE';
      levels.set(it.num, level);
      const what = isStream(it.b?.value) ? 'stream' : 'object';
      if (!details.some((d) => d.object === it.num)) {
        details.push({
          object: it.num,
          revision: it.rev,
          kind: it.a ? 'changed' : 'added',
          level,
          issue: `${what} ${it.num} ${it.a ? 'changed' : 'added'}${level === 'NONE' ? ' (not referenced)' : ''}`,
          ...(level === 'SIGNATURES_ONLY' && ltaOf(it.num) ? { ltaUpdate: true } : {}),
        });
      }
    }

    for (const an of doc.anomalies) {
      if (an.revision !== undefined && an.revision > fromRev && !auditRevisions.has(an.revision) && STRUCTURAL_ANOMALIES.has(an.code)) {
        details.push({ object: an.object, revision: an.revision, kind: 'structure', level: 'OTHER', issue: `${an.code}: ${an.message}` });
      }
    }
    const level = details.reduce<ModificationLevel>((l, d) => maxLevel(l, d.level), 'NONE');
    // Revisions are counted from 1 in answers, as in each signature's `revision`.
    for (const d of details) if (d.revision !== undefined) d.revision += 1;
    return { level, details };
  }

  /**
   * Whether a field's appearance changed from `it.aRev` to `it.bRev`: its /AP entry, or (an indirect /AP) that
   * dictionary or one of the streams it names.
   */
  private appearanceChanged(it: { a?: ResolvedObject; b?: ResolvedObject; aRev: number; bRev: number }): boolean {
    const doc = this.doc;
    const apA = dictOf(it.a?.value)?.map.get('AP');
    const apB = dictOf(it.b?.value)?.map.get('AP');
    if (apA === undefined && apB === undefined) return false;
    if (apA === undefined || apB === undefined || !sameValue(doc.buf, apA, apB)) return true;
    const changed = (n: number) => doc.definitionsOf(n).some((r) => r > it.aRev && r <= it.bRev);
    if (!isRef(apB)) return false;
    if (changed(apB.num)) return true;
    const d = doc.dictAt(apB, it.bRev);
    return [...(d?.map.values() ?? [])].some((v) => isRef(v) && changed(v.num));
  }

  private infoAt(rev: number): PdfDict | undefined {
    return this.doc.dictAt(this.doc.trailerAt(rev)?.map.get('Info'), rev);
  }

  /** The XMP packet of the catalog now against the one in force at `fromRev` (or the /Info it mirrors). */
  private judgeXmpAt(fromRev: number) {
    const doc = this.doc;
    const before = doc.deref(doc.catalogAt(fromRev)?.map.get('Metadata'), fromRev);
    const now = doc.deref(doc.catalogAt(doc.last)?.map.get('Metadata'), doc.last);
    return judgeXmp(doc, before, now, this.infoAt(fromRev));
  }

  /**
   * `added` collects the fields the form gained; a key outside `ltaKeys` (when given) empties the collection
   * so the update does not count as a long-term-validation update.
   */
  private compareAcroForm(
    aRaw: PdfValue | undefined,
    bRaw: PdfValue | undefined,
    fromRev: number,
    toRev: number,
    added?: number[],
    ltaKeys: ReadonlySet<string> = LTA_ACROFORM_KEYS,
  ): ModificationLevel {
    const doc = this.doc;
    const a = doc.dictAt(aRaw, fromRev);
    const b = doc.dictAt(bRaw, toRev);
    if (!a || !b) {
      if (b && added) this.compareList(undefined, b.map.get('Fields'), fromRev, toRev, added);
      return a || b ? 'SIGNATURES_ONLY' : 'NONE';
    }
    const changed = changedKeys(doc, a, b);
    if (!changed.every((k) => ['Fields', 'SigFlags', 'DR', 'DA', 'NeedAppearances'].includes(k))) return 'OTHER';
    const level = changed.includes('Fields') ? this.compareList(a.map.get('Fields'), b.map.get('Fields'), fromRev, toRev, added) : 'SIGNATURES_ONLY';
    if (added && !changed.every((k) => ltaKeys.has(k))) added.length = 0;
    return level;
  }

  /**
   * A list of references (Annots, Fields) may only grow from `fromRev` to `toRev`; the level is that of what
   * was added (collected in `added`).
   */
  private compareList(aRaw: PdfValue | undefined, bRaw: PdfValue | undefined, fromRev: number, toRev: number, added?: number[]): ModificationLevel {
    const doc = this.doc;
    const a = doc.deref(aRaw, fromRev);
    const b = doc.deref(bRaw, toRev);
    const aRefs = new Set((Array.isArray(a) ? a : []).filter(isRef).map((r) => r.num));
    const bList = Array.isArray(b) ? b : [];
    const bRefs = new Set(bList.filter(isRef).map((r) => r.num));
    for (const n of aRefs) if (!bRefs.has(n)) return 'OTHER';
    if (bList.some((x) => !isRef(x))) return 'OTHER';
    let level: ModificationLevel = 'SIGNATURES_ONLY';
    for (const n of bRefs) {
      if (aRefs.has(n)) continue;
      added?.push(n);
      const role = this.role(n, doc.resolve(n, doc.last)?.value);
      level = maxLevel(level, role === 'sigfield' ? 'SIGNATURES_ONLY' : role === 'annot' ? 'ANNOTATIONS' : 'OTHER');
    }
    return level;
  }
}
