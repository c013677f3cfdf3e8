/**
 * Metadata rule (pyHanko's DocInfoRule/MetadataUpdateRule, stricter): signers routinely bump the bookkeeping
 * of the document information dictionary (/ModDate, /Producer) and of the XMP packet (modify/metadata dates,
 * instance id, history), or add an XMP packet mirroring /Info. That is part of signing (SIGNATURES_ONLY).
 * A change to what the metadata *says* (title, author, subject, keywords, rights, any other /Info entry) is
 * METADATA, which no DocMDP level permits.
 */
import { decodePdfText, isStream, sameValue, isString, type PdfDict, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import type { ModificationLevel } from '../modifications.js';

const MAX_XMP_BYTES = 4 * 1024 * 1024;
/** /Info entries a signer may update. */
const INFO_BOOKKEEPING = new Set(['ModDate', 'Producer']);
/** XMP properties that state something about the document, and the /Info entry each mirrors. */
const XMP_CONTENT: Array<[string, string | undefined]> = [
  ['dc:title', 'Title'],
  ['dc:creator', 'Author'],
  ['dc:description', 'Subject'],
  ['pdf:Keywords', 'Keywords'],
  ['dc:subject', undefined],
  ['dc:rights', undefined],
];

export interface MetadataJudgement {
  level: ModificationLevel;
  /** What changed, for the detail's text. */
  what: string[];
}

/** Compares two document information dictionaries (either may be missing). */
export function judgeInfo(buf: Uint8Array, a: PdfDict | undefined, b: PdfDict | undefined): MetadataJudgement {
  const what: string[] = [];
  const keys = new Set([...(a?.map.keys() ?? []), ...(b?.map.keys() ?? [])]);
  for (const k of keys) {
    const x = a?.map.get(k);
    const y = b?.map.get(k);
    if (x !== undefined && y !== undefined && sameValue(buf, x, y)) continue;
    if (INFO_BOOKKEEPING.has(k)) continue;
    what.push(k);
  }
  return { level: what.length ? 'METADATA' : 'SIGNATURES_ONLY', what };
}

function xmpText(doc: PdfDocument, v: PdfValue | undefined): string | undefined {
  if (!isStream(v)) return undefined;
  try {
    return Buffer.from(doc.decode(v, MAX_XMP_BYTES)).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The text of one XMP property (element or attribute form), tags stripped, whitespace collapsed. */
function xmpProperty(xmp: string, name: string): string {
  const esc = name.replace(':', '\\:');
  const el = new RegExp(`<${esc}(?:\\s[^>]*)?>([\\s\\S]*?)</${esc}>`).exec(xmp);
  const attr = el ? undefined : new RegExp(`\\s${esc}\\s*=\\s*"([^"]*)"`).exec(xmp);
  const raw = el?.[1] ?? attr?.[1] ?? '';
  return raw
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

function infoText(info: PdfDict | undefined, key: string): string {
  const v = info?.map.get(key);
  return isString(v) ? decodePdfText(v.bytes).replace(/\s+/g, ' ').trim() : '';
}

/**
 * Compares the XMP packets before and after (either may be missing). Without an earlier packet, the new one
 * may only mirror the earlier /Info (`info`), as Acrobat writes it when signing.
 */
export function judgeXmp(doc: PdfDocument, aV: PdfValue | undefined, bV: PdfValue | undefined, info: PdfDict | undefined): MetadataJudgement {
  const a = xmpText(doc, aV);
  const b = xmpText(doc, bV);
  if (b === undefined) return { level: a === undefined ? 'SIGNATURES_ONLY' : 'METADATA', what: a === undefined ? [] : ['XMP removed'] };
  const what: string[] = [];
  for (const [prop, infoKey] of XMP_CONTENT) {
    const now = xmpProperty(b, prop);
    const before = a !== undefined ? xmpProperty(a, prop) : infoKey ? infoText(info, infoKey) : '';
    if (now !== before) what.push(prop);
  }
  return { level: what.length ? 'METADATA' : 'SIGNATURES_ONLY', what };
}
