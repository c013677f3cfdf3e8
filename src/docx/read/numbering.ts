/**
 * word/numbering.xml as the reader needs it: for a (numId, ilvl), whether the level is ordered, where it
 * starts (a w:num's startOverride first, then the level's w:start) and its indentation (to tell a list
 * item's continuation paragraphs from text after the list). A numbering style link (w:numStyleLink) is
 * followed one step through the style sheet's numbering style.
 */
import { attr, child, childElements, type XElement } from '../xml.js';

export interface LevelInfo {
  ordered: boolean;
  start: number;
  /** Left indentation of the level's paragraphs, twips. */
  indent: number;
  /** w:numFmt "none" or empty level text: no visible marker. */
  hidden: boolean;
  /** A bullet drawn as a ballot box (☐, or ☒/☑ when ticked): the items are tasks (pandoc writes task lists so). */
  check?: boolean;
}

const val = (e: XElement | undefined, name: string): string | undefined => {
  const c = e && child(e, name);
  return c ? attr(c, 'w:val') : undefined;
};

export class Numbering {
  private readonly abstract = new Map<string, XElement>();
  private readonly nums = new Map<string, XElement>();
  private readonly cache = new Map<string, LevelInfo | undefined>();

  constructor(
    root: XElement | undefined,
    /** numbering style id → the numId its pPr names (w:numStyleLink targets). */
    private readonly styleNumId: (styleId: string) => string | undefined,
  ) {
    for (const a of root ? childElements(root, 'w:abstractNum') : []) {
      const id = attr(a, 'w:abstractNumId');
      if (id !== undefined) this.abstract.set(id, a);
    }
    for (const n of root ? childElements(root, 'w:num') : []) {
      const id = attr(n, 'w:numId');
      if (id !== undefined) this.nums.set(id, n);
    }
  }

  private abstractOf(numId: string, hops = 0): XElement | undefined {
    const num = this.nums.get(numId);
    const absId = val(num, 'w:abstractNumId');
    const abs = absId === undefined ? undefined : this.abstract.get(absId);
    if (!abs) return undefined;
    const link = val(abs, 'w:numStyleLink');
    if (link && hops < 2) {
      const linked = this.styleNumId(link);
      if (linked !== undefined && linked !== numId) return this.abstractOf(linked, hops + 1) ?? abs;
    }
    return abs;
  }

  /** The level, or undefined when numId 0 / unknown (no list). */
  level(numId: string, ilvl: number): LevelInfo | undefined {
    const key = `${numId}:${ilvl}`;
    if (this.cache.has(key)) return this.cache.get(key);
    let info: LevelInfo | undefined;
    const num = this.nums.get(numId);
    const abs = numId === '0' ? undefined : this.abstractOf(numId);
    if (num && abs) {
      const override = childElements(num, 'w:lvlOverride').find((o) => Number(attr(o, 'w:ilvl')) === ilvl);
      const lvl = (override && child(override, 'w:lvl')) ?? childElements(abs, 'w:lvl').find((l) => Number(attr(l, 'w:ilvl')) === ilvl);
      const fmt = val(lvl, 'w:numFmt') ?? 'decimal';
      const text = val(lvl, 'w:lvlText');
      const startOverride = Number(val(override, 'w:startOverride'));
      const start =
        Number.isFinite(startOverride) && override && child(override, 'w:startOverride') ? startOverride : Number(val(lvl, 'w:start') ?? 1);
      const ind = lvl && child(child(lvl, 'w:pPr') ?? lvl, 'w:ind');
      const left = ind ? Number(attr(ind, 'w:left') ?? attr(ind, 'w:start')) : NaN;
      info = {
        ordered: fmt !== 'bullet' && fmt !== 'none',
        start: Number.isFinite(start) && start >= 0 ? Math.min(start, 999_999_999) : 1,
        indent: Number.isFinite(left) ? left : 720 * (ilvl + 1),
        hidden: fmt === 'none' || text === '' || (fmt === 'bullet' && text !== undefined && text.trim() === ''),
        check: fmt === 'bullet' && text !== undefined && /^[☐☑☒]$/.test(text.trim()) ? text.trim() !== '☐' : undefined,
      };
    }
    this.cache.set(key, info);
    return info;
  }
}
