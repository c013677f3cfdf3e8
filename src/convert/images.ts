/**
 * Images in converted documents: data URIs only (nothing is ever fetched), decoded under per-image and
 * per-document budgets, sniffed for a format Word shows, stored once per distinct URI as a media part, and
 * placed as an inline drawing (src/docx/drawing.ts) no wider than the text.
 */
import { imageSize } from 'image-size';
import { inlineDrawingXml, pxToEmu } from '../docx/drawing.js';
import type { Relationships } from '../docx/wordml/relationships.js';
import type { MediaPart } from './html-to-docx.js';

const MAX_DATA_URI_CHARS = 20 * 1024 * 1024;
const MAX_IMAGE_PIXELS = 50_000_000;
/** Images embedded per document, and the data-URI text decoded for them in all. */
const MAX_IMAGES = 2000;
const MAX_DATA_URI_TOTAL_CHARS = 64 * 1024 * 1024;

/** An embedded image: its relationship id and its size in pixels. */
export interface EmbeddedImage {
  id: string;
  w: number;
  h: number;
}

export class ImageStore {
  readonly media: MediaPart[] = [];
  private readonly byUri = new Map<string, EmbeddedImage | null>();
  private decodedChars = 0;
  private nextMedia = 1;
  private nextDrawing: number;

  constructor(
    private readonly rels: Relationships,
    private readonly warnings: string[],
    private readonly mediaPrefix: string,
    firstDrawingId: number,
  ) {
    this.nextDrawing = firstDrawingId;
  }

  /** The image a source stands for, or null (with a warning) when it is not a usable data URI. */
  image(src: string): EmbeddedImage | null {
    if (!/^data:/i.test(src)) {
      this.warnings.push(src ? 'an image with a non-data URI was dropped (never fetched)' : 'an image without a source was dropped');
      return null;
    }
    let entry = this.byUri.get(src);
    if (entry === undefined) {
      entry = this.embedDataUri(src);
      this.byUri.set(src, entry);
    }
    return entry;
  }

  /** The w:drawing of an image at (w, h) pixels, at most `maxPx` wide. */
  drawing(img: EmbeddedImage, w: number, h: number, maxPx: number, alt: string, title: string | undefined): string {
    if (w > maxPx) {
      h = (h * maxPx) / w;
      w = maxPx;
    }
    const id = this.nextDrawing++;
    // Attribute values here have always been single-line (tabs and newlines as spaces), as Word shows them.
    const oneLine = (s: string) => s.replace(/[\t\n\r]/g, ' ');
    return inlineDrawingXml({
      rId: img.id,
      widthEmu: Math.max(1, pxToEmu(w)),
      heightEmu: Math.max(1, pxToEmu(h)),
      id,
      name: `Picture ${id}`,
      description: oneLine(alt.slice(0, 2000)),
      title: title ? oneLine(title.slice(0, 500)) : undefined,
      pictureName: `image${id}`,
    });
  }

  private embedDataUri(src: string): EmbeddedImage | null {
    if (src.length > MAX_DATA_URI_CHARS) {
      this.warnings.push('an image data URI over 20 MB was dropped');
      return null;
    }
    // Decoding is bounded per document too: many distinct data URIs just under the per-image cap would
    // otherwise decode without limit.
    if (this.media.length >= MAX_IMAGES || this.decodedChars + src.length > MAX_DATA_URI_TOTAL_CHARS) {
      this.warnings.push(
        `images past the document's image budget (${MAX_IMAGES} images or ${MAX_DATA_URI_TOTAL_CHARS / 1024 / 1024} MB of data URIs) were dropped`,
      );
      return null;
    }
    this.decodedChars += src.length;
    const comma = src.indexOf(',');
    if (comma < 0) return null;
    const header = src.slice(5, comma).toLowerCase();
    if (!header.endsWith(';base64')) {
      this.warnings.push('a non-base64 image data URI was dropped');
      return null;
    }
    let bytes: Uint8Array;
    try {
      const b = Buffer.from(src.slice(comma + 1).replace(/\s+/g, ''), 'base64');
      bytes = new Uint8Array(b.buffer, b.byteOffset, b.length);
    } catch {
      return null;
    }
    const kind = sniffImage(bytes);
    if (!kind) {
      this.warnings.push('an image in a format Word cannot show (not PNG, JPEG, GIF or BMP) was dropped');
      return null;
    }
    let dims: { width?: number; height?: number };
    try {
      dims = imageSize(bytes);
    } catch {
      this.warnings.push('an unreadable image was dropped');
      return null;
    }
    const w = dims.width ?? 0;
    const h = dims.height ?? 0;
    if (w <= 0 || h <= 0 || w * h > MAX_IMAGE_PIXELS) {
      this.warnings.push('an image over the pixel budget was dropped');
      return null;
    }
    const name = `${this.mediaPrefix}${this.nextMedia++}.${kind.ext}`;
    const id = this.rels.image(`media/${name}`);
    this.media.push({ path: `word/media/${name}`, bytes, contentType: kind.type, extension: kind.ext });
    return { id, w, h };
  }
}

function sniffImage(b: Uint8Array): { ext: string; type: string } | undefined {
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return { ext: 'png', type: 'image/png' };
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { ext: 'jpeg', type: 'image/jpeg' };
  if (b.length > 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return { ext: 'gif', type: 'image/gif' };
  if (b.length > 2 && b[0] === 0x42 && b[1] === 0x4d) return { ext: 'bmp', type: 'image/bmp' };
  return undefined;
}
