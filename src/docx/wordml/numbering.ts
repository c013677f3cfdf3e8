/**
 * List numbering for numbering.xml: `<w:abstractNum>` definitions (the look of each level) and `<w:num>`
 * instances that paragraphs point at. Lists of the same look share one definition. Bullet lists also share
 * their instance (nothing to restart); every ordered list gets an instance of its own with a start override,
 * so each one restarts its count as in HTML.
 */
import { NS, XML_DECL } from '../namespaces.js';
import { xmlAttr } from './escape.js';

const BULLETS = ['•', '◦', '▪', '•', '◦', '▪', '•', '◦', '▪'];
const ORDERED_LEVEL = ['decimal', 'lowerLetter', 'lowerRoman', 'decimal', 'lowerLetter', 'lowerRoman', 'decimal', 'lowerLetter', 'lowerRoman'];

/** The bullet character of a level: a CSS list-style-type (disc, circle, square), or the level's default. */
export function bulletChar(style: string | undefined, level: number): string {
  if (style === 'circle') return '◦';
  if (style === 'square') return '▪';
  if (style === 'disc') return '•';
  return BULLETS[level % 9]!;
}

export interface ListSpec {
  ordered: boolean;
  /** The list level's w:numFmt (decimal, lowerLetter, bullet, none …). */
  format: string;
  /** 0–8. */
  level: number;
  /** The CSS list-style-type asked for, if any (chooses the bullet character). */
  bulletStyle?: string;
  /** Left indentation of the list's container, in twips. */
  baseIndent: number;
  start: number;
}

export class Numbering {
  /** <w:abstractNum> elements, then <w:num> elements, for numbering.xml. */
  readonly abstractNums: string[] = [];
  readonly nums: string[] = [];
  private readonly abstractBySignature = new Map<string, number>();
  private readonly bulletNumBySignature = new Map<string, number>();
  private readonly numToAbstract = new Map<number, number>();

  /** `next`: the first id to allocate (abstractNumIds and numIds share one counter). */
  constructor(private next: number) {}

  /** The w:numId for a new list of this look. */
  list(spec: ListSpec): number {
    const { ordered, format, level, bulletStyle, baseIndent, start } = spec;
    const signature = `${ordered ? 'o' : 'u'}|${format}|${level}|${bulletStyle ?? ''}|${baseIndent}|${start}`;
    let abstractId = this.abstractBySignature.get(signature);
    if (abstractId === undefined) {
      abstractId = this.next++;
      this.abstractBySignature.set(signature, abstractId);
      let lvls = '';
      for (let i = 0; i < 9; i++) {
        const left = baseIndent + 720 * (i - level + 1);
        const lvlFmt = i === level ? format : ordered ? ORDERED_LEVEL[i]! : 'bullet';
        const text = lvlFmt === 'bullet' ? bulletChar(i === level ? bulletStyle : undefined, i) : lvlFmt === 'none' ? '' : `%${i + 1}.`;
        lvls +=
          `<w:lvl w:ilvl="${i}"><w:start w:val="${i === level ? start : 1}"/><w:numFmt w:val="${lvlFmt}"/>` +
          `<w:lvlText w:val="${xmlAttr(text)}"/><w:lvlJc w:val="left"/>` +
          `<w:pPr><w:ind w:left="${Math.max(360, left)}" w:hanging="360"/></w:pPr></w:lvl>`;
      }
      this.abstractNums.push(`<w:abstractNum w:abstractNumId="${abstractId}"><w:multiLevelType w:val="multilevel"/>${lvls}</w:abstractNum>`);
    }
    let numId: number | undefined = ordered ? undefined : this.bulletNumBySignature.get(signature);
    if (numId === undefined) {
      numId = this.next++;
      this.numToAbstract.set(numId, abstractId);
      if (!ordered) this.bulletNumBySignature.set(signature, numId);
      this.nums.push(
        ordered
          ? `<w:num w:numId="${numId}"><w:abstractNumId w:val="${abstractId}"/><w:lvlOverride w:ilvl="${level}"><w:startOverride w:val="${start}"/></w:lvlOverride></w:num>`
          : `<w:num w:numId="${numId}"><w:abstractNumId w:val="${abstractId}"/></w:num>`,
      );
    }
    return numId;
  }

  /** A fresh w:num on the definition of `numId` whose level `ilvl` restarts at `start` (<li value="n">). */
  restart(numId: number, ilvl: number, start: number): number {
    const id = this.next++;
    const abstract = this.numToAbstract.get(numId) ?? numId;
    this.nums.push(
      `<w:num w:numId="${id}"><w:abstractNumId w:val="${abstract}"/><w:lvlOverride w:ilvl="${ilvl}"><w:startOverride w:val="${Math.max(0, Math.min(32767, start))}"/></w:lvlOverride></w:num>`,
    );
    this.numToAbstract.set(id, abstract);
    return id;
  }

  /** The id the next list would get (for the implicit list of stray <li>s). */
  peek(): number {
    return this.next;
  }
}

/** numbering.xml holding these definitions and instances (every w:abstractNum before the first w:num). */
export function numberingPartXml(abstractNums: readonly string[], nums: readonly string[]): string {
  return `${XML_DECL}<w:numbering xmlns:w="${NS.w}">${abstractNums.join('')}${nums.join('')}</w:numbering>`;
}

/** The highest w:abstractNumId or w:numId of an existing numbering.xml (ids share one counter here). */
export function maxNumberingId(xml: string): number {
  let max = 0;
  for (const m of xml.matchAll(/w:(?:abstractNumId|numId)="(\d+)"/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/**
 * An existing numbering.xml with definitions and instances added, in schema order: the new w:abstractNums
 * before its first w:num, the new w:nums at the end.
 */
export function addToNumberingPart(xml: string, abstractNums: readonly string[], nums: readonly string[]): string {
  const firstNum = xml.search(/<w:num\b/);
  const close = xml.lastIndexOf('</w:numbering>');
  const absAt = firstNum >= 0 ? firstNum : close;
  return xml.slice(0, absAt) + abstractNums.join('') + xml.slice(absAt, close) + nums.join('') + xml.slice(close);
}
