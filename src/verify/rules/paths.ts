/**
 * Reference-path rule (pyHanko's `QualifiedWhitelistRule` with `ReferenceUpdate` contexts and `safe_whitelist`):
 * a later revision that rewrites an object the signed revision already had is explained only if *every* site
 * by which that object was reachable from the signed revision's trailer is one the rule excusing the rewrite
 * checked. The rules' sites, per kind of object:
 *
 * - the catalog, a page, a signature dictionary: any (pyHanko approves these wholesale: their other uses, a
 *   /Data of a signature reference or a widget's /P, are checked by the rules on what they contain);
 * - the form dictionary: /Root /AcroForm; the document information: trailer /Info; XMP: /Root /Metadata;
 * - the DSS and what it holds: /Root /DSS and places inside the DSS;
 * - a field or widget: the form's /Fields (and /CO), a field's /Kids, a page's /Annots (direct, or an
 *   indirect array used only so), the structure tree's object references;
 * - an annotation: a page's /Annots, another annotation's /Popup or /IRT, the structure tree;
 * - anything else (streams, arrays, dictionaries without a role): /Root /Extensions, the form's /Fields,
 *   /DR and /CO, a page's /Annots, a terminal field's /Kids, places inside the DSS, the /V of a field being
 *   filled, and the appearance of a form field or of a signature field this update signs — its /AP
 *   dictionary (used there only), or /N, /R, /D of it (a field without appearance states, /AS), reached
 *   directly or through its /AP dictionary used there only. Whether that appearance change is form filling,
 *   an annotation-level change (the value stays) or OTHER is the field rules' business.
 *
 * A site outside these is another use of the object that the update also changed (an appearance stream that
 * is /Root /FooBar too, an /AP dictionary shared with another annotation or named in the trailer): the
 * rewrite is OTHER, whatever the rule for the object's own role said.
 */
import { dictOf, isName, isRef, type PdfDict, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import { describeSite, type Site, type Usages } from '../usages.js';

export type PathKind = 'acroform' | 'info' | 'metadata' | 'dss' | 'field' | 'annot' | 'other';

export interface PathContext {
  doc: PdfDocument;
  /** The revision the rewrite is judged against (the signed revision, or the start of an audit stretch). */
  rev: number;
  usages: Usages;
  /** Whether the field (or a widget's field) `num` gets another value after `rev`. */
  filled(num: number): boolean;
}

const APPEARANCE_KEYS = new Set(['N', 'R', 'D']);
const MAX_DEPTH = 4;

function at(ctx: PathContext, num: number): PdfDict | undefined {
  return dictOf(ctx.doc.resolve(num, ctx.rev)?.value);
}

function valueAt(ctx: PathContext, num: number): PdfValue | undefined {
  return ctx.doc.resolve(num, ctx.rev)?.value;
}

const refNum = (v: PdfValue | undefined) => (isRef(v) ? v.num : undefined);

/** A field or widget dictionary at `rev` (/FT, /T with /Kids, or a widget annotation). */
function isFieldLike(d: PdfDict | undefined): boolean {
  return !!d && (d.map.has('FT') || (d.map.has('T') && d.map.has('Kids')) || isName(d.map.get('Subtype'), 'Widget'));
}

const isPage = (d: PdfDict | undefined) => !!d && isName(d.map.get('Type'), 'Page');
const isAnnot = (d: PdfDict | undefined) => !!d && d.map.has('Subtype') && d.map.has('Rect');

class SiteJudge {
  private readonly catalogNum?: number;
  private readonly acroFormNum?: number;
  private readonly dssNum?: number;

  constructor(private readonly ctx: PathContext) {
    const doc = ctx.doc;
    this.catalogNum = doc.catalogRefAt(ctx.rev)?.num;
    const cat = doc.catalogAt(ctx.rev);
    this.acroFormNum = refNum(cat?.map.get('AcroForm'));
    this.dssNum = refNum(cat?.map.get('DSS'));
  }

  describe(site: Site): string {
    return describeSite(site, this.catalogNum);
  }

  private starts(site: Site, from: number | 'trailer' | undefined, ...keys: Array<string | number>): boolean {
    return from !== undefined && site.from === from && keys.every((k, i) => site.path[i] === k);
  }

  /** The form's own lists: /Root /AcroForm /Fields|/CO, directly or in the form dictionary object. */
  private inFormList(site: Site): boolean {
    return ['Fields', 'CO'].some((k) => this.starts(site, this.catalogNum, 'AcroForm', k) || this.starts(site, this.acroFormNum, k));
  }

  /** A list of fields or annotations: the form's /Fields or /CO, a field's /Kids, a page's /Annots. */
  private isListSite(site: Site): boolean {
    if (this.inFormList(site) && site.path.length <= (site.from === this.catalogNum ? 2 : 1)) return true;
    if (site.from === 'trailer' || site.path.length !== 1) return false;
    const d = at(this.ctx, site.from);
    return (site.path[0] === 'Kids' && isFieldLike(d)) || (site.path[0] === 'Annots' && isPage(d));
  }

  /** An element of a list (`[i]` of the list, direct or an indirect array used only as a list). */
  private inList(site: Site, depth: number): boolean {
    const last = site.path[site.path.length - 1];
    if (typeof last !== 'number') return false;
    const list: Site = { from: site.from, path: site.path.slice(0, -1) };
    if (list.path.length > 0) return this.isListSite(list);
    if (site.from === 'trailer' || !Array.isArray(valueAt(this.ctx, site.from))) return false;
    return this.allSites(site.from, depth, (s) => this.isListSite(s));
  }

  /** A structure element's object reference (/Obj of an OBJR, or /K of a structure element). */
  private inStructTree(site: Site): boolean {
    if (site.from === 'trailer') return false;
    const d = at(this.ctx, site.from);
    return !!d && ((site.path[0] === 'Obj' && isName(d.map.get('Type'), 'OBJR')) || (site.path[0] === 'K' && d.map.has('S')));
  }

  /** A site inside the DSS: /Root /DSS …, the DSS object, or an object used only inside the DSS. */
  private inDss(site: Site, depth: number): boolean {
    if (this.starts(site, this.catalogNum, 'DSS') || (this.dssNum !== undefined && site.from === this.dssNum)) return true;
    if (site.from === 'trailer' || depth >= MAX_DEPTH) return false;
    return this.allSites(site.from, depth + 1, (s, d) => this.inDss(s, d));
  }

  private allSites(num: number, depth: number, ok: (s: Site, depth: number) => boolean): boolean {
    if (depth >= MAX_DEPTH) return false;
    const sites = this.ctx.usages.sitesOf(num);
    return sites.length > 0 && sites.every((s) => ok(s, depth + 1));
  }

  /**
   * A field whose appearance the field rules judge (pyHanko's in-place appearance update): a form field, or a
   * signature field this update signs, without appearance states (/AS) in the signed revision.
   */
  private appearanceOwner(num: number | 'trailer'): boolean {
    if (num === 'trailer') return false;
    const d = at(this.ctx, num);
    if (!isFieldLike(d) || d!.map.has('AS')) return false;
    return !this.isSignatureField(d!) || this.ctx.filled(num);
  }

  /** /FT /Sig on the field or, for a widget, on the fields above it. */
  private isSignatureField(d: PdfDict): boolean {
    let cur: PdfDict | undefined = d;
    for (let i = 0; cur && i < 16; i++) {
      const ft = cur.map.get('FT');
      if (ft !== undefined) return isName(ft, 'Sig');
      cur = this.ctx.doc.dictAt(cur.map.get('Parent'), this.ctx.rev);
    }
    return false;
  }

  /** An appearance site of a field being filled (see the header), for the object `x`. */
  private appearanceSite(x: number, site: Site, depth: number): boolean {
    const [k0, k1] = site.path;
    if (k0 === 'AP' && site.path.length === 1) {
      // The /AP dictionary itself: only when the field is its one use (pyHanko's "used once" check).
      return this.appearanceOwner(site.from) && this.ctx.usages.sitesOf(x).length === 1;
    }
    if (k0 === 'AP' && site.path.length === 2 && APPEARANCE_KEYS.has(String(k1))) return this.appearanceOwner(site.from);
    if (site.path.length === 1 && APPEARANCE_KEYS.has(String(k0)) && site.from !== 'trailer' && depth < MAX_DEPTH) {
      // /N of an indirect /AP dictionary: that dictionary used once, as the /AP of a field being filled.
      const apSites = this.ctx.usages.sitesOf(site.from);
      const only = apSites.length === 1 ? apSites[0]! : undefined;
      return !!only && only.path.length === 1 && only.path[0] === 'AP' && this.appearanceOwner(only.from);
    }
    return false;
  }

  permitted(x: number, kind: PathKind, site: Site): boolean {
    switch (kind) {
      case 'acroform':
        return this.starts(site, this.catalogNum, 'AcroForm') && site.path.length === 1;
      case 'info':
        return this.starts(site, 'trailer', 'Info') && site.path.length === 1;
      case 'metadata':
        return this.starts(site, this.catalogNum, 'Metadata') && site.path.length === 1;
      case 'dss':
        return this.inDss(site, 0);
      case 'field':
        return this.inList(site, 0) || this.inStructTree(site);
      case 'annot': {
        if (this.inList(site, 0) || this.inStructTree(site)) return true;
        const d = site.from === 'trailer' ? undefined : at(this.ctx, site.from);
        return isAnnot(d) && site.path.length === 1 && (site.path[0] === 'Popup' || site.path[0] === 'IRT');
      }
      case 'other': {
        if (this.starts(site, this.catalogNum, 'Extensions') || this.starts(site, this.catalogNum, 'Metadata')) return true;
        if (['Fields', 'DR', 'CO'].some((k) => this.starts(site, this.catalogNum, 'AcroForm', k) || this.starts(site, this.acroFormNum, k)))
          return true;
        if (this.starts(site, 'trailer', 'Info') && site.path.length === 1) return true;
        if (this.inDss(site, 0)) return true;
        if (site.from !== 'trailer' && site.path.length === 1) {
          const d = at(this.ctx, site.from);
          if (site.path[0] === 'Annots' && isPage(d)) return true;
          // A terminal field's widget list (a field holding fields keeps its /Kids: pyHanko's deep-field rule).
          if (site.path[0] === 'Kids' && isFieldLike(d) && !this.holdsFields(d!)) return true;
          if (site.path[0] === 'V' && isFieldLike(d) && this.ctx.filled(site.from)) return true;
        }
        return this.appearanceSite(x, site, 0);
      }
    }
  }

  private holdsFields(d: PdfDict): boolean {
    const kids = this.ctx.doc.deref(d.map.get('Kids'), this.ctx.rev);
    return Array.isArray(kids) && kids.some((k) => this.ctx.doc.dictAt(k, this.ctx.rev)?.map.has('T'));
  }
}

/**
 * The first site of object `num` in the signed revision that the rule for `kind` does not permit, as text
 * (e.g. `/Root /FooBar`), or undefined when every use is one the rule checked. An object that was in use but
 * reachable by no path at all in the signed revision has no site to clear (pyHanko: no usage to approve).
 */
export function unexplainedUse(ctx: PathContext, num: number, kind: PathKind): string | undefined {
  const judge = new SiteJudge(ctx);
  for (const site of ctx.usages.sitesOf(num)) if (!judge.permitted(num, kind, site)) return judge.describe(site);
  return undefined;
}

/**
 * pyHanko's check on appearance updates: when a field's appearance changes and its /AP in the signed revision
 * was an indirect dictionary, that dictionary must have had no other use (another annotation's /AP, a key of
 * the catalog or the trailer): the other use would change with it. Returns that other use, as text.
 */
export function sharedAppearanceDictionary(ctx: PathContext, fieldNum: number): string | undefined {
  const ap = at(ctx, fieldNum)?.map.get('AP');
  if (!isRef(ap)) return undefined;
  const sites = ctx.usages.sitesOf(ap.num);
  if (sites.length <= 1) return undefined;
  const judge = new SiteJudge(ctx);
  const other = sites.find((s) => !(s.from === fieldNum && s.path.length === 1 && s.path[0] === 'AP')) ?? sites[1]!;
  return `the appearance dictionary ${ap.num} of object ${fieldNum} is also used at ${judge.describe(other)}`;
}
