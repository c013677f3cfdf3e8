/**
 * Reference paths (pyHanko's `_get_usages_of_ref`, bounded): where each object is used in the document as of a
 * revision — the *sites* holding a reference to it, each a container (an object, or the trailer) and the key
 * path inside it — counting only containers reachable from that revision's trailer. A rule may excuse the
 * rewrite of an object that already existed only along the paths it checked; a site it did not check (an
 * appearance stream that is also /Root /FooBar, an /AP dictionary shared with another annotation or named
 * in the trailer) leaves the rewrite unexplained (rules/paths.ts).
 *
 * pyHanko enumerates every path from the trailer; the sites are their last steps, which is what its relative
 * contexts compare, and they are found without walking the whole document: the referrers of an object at
 * revision `rev` are those of the final revision's referrer index (referrers.ts) whose body did not change
 * after `rev`, plus the objects that did change, read as they were at `rev`. Reachability is decided upward
 * (a container is reachable when the trailer or a reachable object refers to it), memoised per revision and
 * bounded by the number of objects. As in pyHanko, a `/Parent` entry is no use of its target (every widget
 * names its field so; the field's own paths are what count).
 */
import { collectRefs, type PdfDocument, type PdfValue } from '../pdf/index.js';
import type { ReferrerIndex } from './referrers.js';

export type PathStep = string | number;

/** One place holding a reference: `from` (an object number, or the trailer) and the key path inside it. */
export interface Site {
  from: number | 'trailer';
  path: PathStep[];
}

/** Containers visited per revision while deciding reachability (beyond it an object counts as reachable). */
const MAX_VISITS = 300_000;
/** Sites recorded per object and container (a page's /Annots of thousands of widgets names each once). */
const MAX_SITES = 64;

/** Every key path inside `v` at which a reference to `target` sits (not through a /Parent entry). */
export function pathsTo(v: PdfValue | undefined, target: number, out: PathStep[][] = [], prefix: PathStep[] = [], depth = 0): PathStep[][] {
  if (v === null || v === undefined || typeof v !== 'object' || depth > 32 || out.length >= MAX_SITES) return out;
  if (Array.isArray(v)) {
    v.forEach((x, i) => pathsTo(x, target, out, [...prefix, i], depth + 1));
    return out;
  }
  if (v.kind === 'ref') {
    if (v.num === target) out.push(prefix);
  } else if (v.kind === 'dict' || v.kind === 'stream') {
    const map = v.kind === 'dict' ? v.map : v.dict.map;
    for (const [k, x] of map) if (k !== 'Parent') pathsTo(x, target, out, [...prefix, k], depth + 1);
  }
  return out;
}

/** Every reference in `v` not under a /Parent entry. */
function collectNonParentRefs(v: PdfValue | undefined, add: (n: number) => void, depth = 0): void {
  if (v === null || v === undefined || typeof v !== 'object' || depth > 32) return;
  if (Array.isArray(v)) {
    for (const x of v) collectNonParentRefs(x, add, depth + 1);
    return;
  }
  if (v.kind === 'ref') add(v.num);
  else if (v.kind === 'dict' || v.kind === 'stream') {
    for (const [k, x] of v.kind === 'dict' ? v.map : v.dict.map) if (k !== 'Parent') collectNonParentRefs(x, add, depth + 1);
  }
}

export class Usages {
  /** Objects changed after `rev`: their referrers are read as they were at `rev`, not from the final index. */
  private readonly changed: Set<number>;
  private changedRefs?: Map<number, number[]>;
  private readonly reach = new Map<number, boolean>();
  private readonly siteCache = new Map<number, Site[]>();
  /** Per container: what it refers to other than through /Parent (a page's /Annots is read once, not per annotation). */
  private readonly refSets = new Map<number, Set<number>>();
  private trailerRefs?: Set<number>;
  private visits = 0;

  constructor(
    private readonly doc: PdfDocument,
    private readonly rev: number,
    private readonly finalIndex: () => ReferrerIndex,
  ) {
    this.changed = rev >= doc.last ? new Set() : doc.numbersChangedAfter(rev);
  }

  private valueOf(num: number): PdfValue | undefined {
    return this.doc.resolve(num, this.rev)?.value;
  }

  /** The objects `num` refers to at `rev`, /Parent aside (memoised). */
  private refsOf(num: number): Set<number> {
    let set = this.refSets.get(num);
    if (!set) {
      set = new Set();
      const into = set;
      collectNonParentRefs(this.valueOf(num), (n) => into.add(n));
      this.refSets.set(num, set);
    }
    return set;
  }

  private refersFromTrailer(num: number): boolean {
    if (!this.trailerRefs) {
      const set = new Set<number>();
      collectNonParentRefs(this.doc.trailerAt(this.rev), (n) => set.add(n));
      this.trailerRefs = set;
    }
    return this.trailerRefs.has(num);
  }

  /** Objects whose value at `rev` holds a reference to `num` (any key; /Parent filtered by the callers). */
  referrers(num: number): number[] {
    if (!this.changedRefs) {
      const m = new Map<number, number[]>();
      for (const c of this.changed) {
        collectRefs(this.valueOf(c), (t) => {
          const list = m.get(t);
          if (!list) m.set(t, [c]);
          else if (list[list.length - 1] !== c) list.push(c);
        });
      }
      this.changedRefs = m;
    }
    const out = new Set<number>();
    for (const r of this.finalIndex().get(num) ?? []) if (!this.changed.has(r)) out.add(r);
    for (const r of this.changedRefs.get(num) ?? []) out.add(r);
    return [...out];
  }

  /** The sites of `num` at `rev` in containers reachable from the trailer (the trailer's own first). */
  sitesOf(num: number): Site[] {
    const hit = this.siteCache.get(num);
    if (hit) return hit;
    const sites: Site[] = [];
    if (this.refersFromTrailer(num))
      for (const path of pathsTo(this.doc.trailerAt(this.rev) ?? undefined, num)) sites.push({ from: 'trailer', path });
    for (const r of this.referrers(num)) {
      if (r === num || !this.refsOf(r).has(num) || !this.reachable(r)) continue;
      for (const path of pathsTo(this.valueOf(r), num)) sites.push({ from: r, path });
    }
    this.siteCache.set(num, sites);
    return sites;
  }

  private seeded = false;

  /**
   * Marks what is reachable by construction, so that upward searches stop early instead of asking who refers to
   * the page tree's root (every page, through /Parent) or to the catalog: the objects the trailer and the catalog
   * name, the kids of the page tree's root and the form's top-level fields.
   */
  private seed(): void {
    this.seeded = true;
    const doc = this.doc;
    const mark = (v: PdfValue | undefined) => {
      collectNonParentRefs(v, (n) => this.reach.set(n, true));
    };
    const trailer = doc.trailerAt(this.rev);
    mark(trailer);
    const catalog = doc.catalogAt(this.rev);
    mark(catalog);
    const pages = doc.dictAt(catalog?.map.get('Pages'), this.rev);
    mark(doc.deref(pages?.map.get('Kids'), this.rev));
    const form = doc.dictAt(catalog?.map.get('AcroForm'), this.rev);
    mark(doc.deref(form?.map.get('Fields'), this.rev));
  }

  /** Whether `num` is reachable from the trailer at `rev` (upward search over referrers, memoised). */
  reachable(num: number): boolean {
    if (!this.seeded) this.seed();
    const known = this.reach.get(num);
    if (known !== undefined) return known;
    const visited = new Set<number>([num]);
    const stack = [num];
    let found = false;
    while (stack.length && !found) {
      const n = stack.pop()!;
      if (this.reach.get(n) === true || this.refersFromTrailer(n)) {
        found = true;
        break;
      }
      if (++this.visits > MAX_VISITS) {
        // Past the bound the answer errs on the side of "used": a site counts rather than hides.
        found = true;
        break;
      }
      for (const r of this.referrers(n)) {
        if (visited.has(r) || this.reach.get(r) === false) continue;
        if (!this.refsOf(r).has(n)) continue; // only through /Parent
        visited.add(r);
        stack.push(r);
      }
    }
    // A failed search explored the whole upward closure of every object it visited: none of them is reachable.
    if (found) this.reach.set(num, true);
    else for (const v of visited) this.reach.set(v, false);
    return found;
  }
}

/** A site as text: `trailer /FooBar`, `/Root /Extensions`, `object 10 /N`. */
export function describeSite(site: Site, catalogNum: number | undefined): string {
  const steps = site.path.map((s) => (typeof s === 'number' ? `[${s}]` : ` /${s}`)).join('');
  if (site.from === 'trailer') return `trailer${steps}`;
  if (site.from === catalogNum) return `/Root${steps}`;
  return `object ${site.from}${steps}`;
}
