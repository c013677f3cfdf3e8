/**
 * What kind of picture an image part holds: by its bytes first (the signatures of PNG, JPEG, GIF, BMP, WebP,
 * TIFF, EMF, WMF and SVG), else by the content type [Content_Types].xml declares for it (an Override for the
 * part, else the Default for its extension), never by the extension alone: Word and other producers store
 * pictures as `image1.tmp`, `image.bin` or without an extension, and a file named .png may hold a JPEG.
 */
import { attr, childElements, type XElement } from '../xml.js';

export interface ContentTypes {
  /** Part name (no leading '/', lower case) → content type. */
  overrides: Map<string, string>;
  /** Extension (lower case) → content type. */
  defaults: Map<string, string>;
}

/** The content types of a parsed [Content_Types].xml (an empty table when there is none). */
export function contentTypes(root: XElement | undefined): ContentTypes {
  const out: ContentTypes = { overrides: new Map(), defaults: new Map() };
  if (!root) return out;
  for (const d of childElements(root, 'Default')) {
    const ext = attr(d, 'Extension');
    const type = attr(d, 'ContentType');
    if (ext && type) out.defaults.set(ext.toLowerCase(), type.trim().toLowerCase());
  }
  for (const o of childElements(root, 'Override')) {
    const name = attr(o, 'PartName');
    const type = attr(o, 'ContentType');
    if (name && type) out.overrides.set(name.replace(/^\//, '').toLowerCase(), type.trim().toLowerCase());
  }
  return out;
}

/** The declared content type of a part (Override, else the Default of its extension). */
export function declaredType(types: ContentTypes, part: string): string | undefined {
  const name = part.toLowerCase();
  const override = types.overrides.get(name);
  if (override) return override;
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  return dot > slash ? types.defaults.get(name.slice(dot + 1)) : undefined;
}

const starts = (b: Uint8Array, sig: number[], at = 0) => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);

/** The picture kind of the bytes, by their signature, or undefined. */
export function sniffImage(b: Uint8Array): string | undefined {
  if (starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts(b, [0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (starts(b, [0x52, 0x49, 0x46, 0x46]) && starts(b, [0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  if (starts(b, [0x49, 0x49, 0x2a, 0x00]) || starts(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (starts(b, [0x42, 0x4d]) && b.length > 14) return 'image/bmp';
  // EMF: record type 1 (EMR_HEADER), then " EMF" at byte 40.
  if (starts(b, [0x01, 0x00, 0x00, 0x00]) && starts(b, [0x20, 0x45, 0x4d, 0x46], 40)) return 'image/x-emf';
  // WMF: the placeable header's key, or a plain METAHEADER (type 1 or 2, header size 9 words).
  if (starts(b, [0xd7, 0xcd, 0xc6, 0x9a]) || starts(b, [0x01, 0x00, 0x09, 0x00]) || starts(b, [0x02, 0x00, 0x09, 0x00])) return 'image/x-wmf';
  // SVG: XML text whose first element is <svg (after a declaration, comments or a BOM).
  const head = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(0, 1024));
  if (/^\uFEFF?\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(head)) return 'image/svg+xml';
  return undefined;
}

/** Content types the writers may label a picture with (as a data URI). */
const KNOWN = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/tiff',
  'image/bmp',
  'image/x-emf',
  'image/x-wmf',
  'image/svg+xml',
]);
const ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/emf': 'image/x-emf',
  'image/wmf': 'image/x-wmf',
  'image/x-png': 'image/png',
};

/**
 * The kind of a picture: its bytes' signature when they have one; else the declared type when it names one of
 * the known kinds (a picture whose signature we do not check); else undefined (not a picture we can show).
 */
export function imageKind(bytes: Uint8Array, declared: string | undefined): string | undefined {
  const sniffed = sniffImage(bytes);
  if (sniffed) return sniffed;
  const d = declared && (ALIASES[declared] ?? declared);
  // A declared raster kind whose bytes lack its signature is not that picture.
  if (d && KNOWN.has(d) && !['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/svg+xml'].includes(d)) return d;
  return undefined;
}
