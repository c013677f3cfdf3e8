/**
 * Images for image and signature fields: recognising the bytes (PNG, JPEG, GIF, SVG), the PNG fallback that
 * Word and LibreOffice need beside an SVG (rasterised with resvg in a bounded child process: svg-raster.ts),
 * typed signatures rendered from a name, sizing (explicit pixels or fitted into the control's box). The
 * DrawingML of the inline picture itself is src/docx/drawing.ts, shared with convert.
 */
import fs from 'node:fs';
import { imageSize } from 'image-size';
import { Resvg } from '@resvg/resvg-js';
import { FolioError } from '../errors.js';
import { EMU_PER_PX } from '../docx/drawing.js';
import { escapeText, stripInvalidXmlChars } from '../docx/xml.js';
import { rasteriseSvg } from './svg-raster.js';

/** Widest SVG fallback raster, in pixels: enough for print at the sizes a template holds, bounded in memory. */
const MAX_RASTER_SIDE = 2000;
const MAX_SVG_BYTES = 5 * 1024 * 1024;

export interface PreparedImage {
  /** The image as embedded: PNG/JPEG/GIF, or for SVG the PNG fallback. */
  bytes: Uint8Array;
  extension: 'png' | 'jpeg' | 'gif';
  contentType: string;
  /** The SVG itself, embedded beside the fallback (asvg:svgBlip). */
  svg?: Uint8Array;
  widthPx: number;
  heightPx: number;
  description: string;
}

const TYPES: Record<string, { extension: PreparedImage['extension']; contentType: string }> = {
  png: { extension: 'png', contentType: 'image/png' },
  jpg: { extension: 'jpeg', contentType: 'image/jpeg' },
  gif: { extension: 'gif', contentType: 'image/gif' },
};

function unusable(field: string, issue: string): FolioError {
  return new FolioError('VALIDATION_ERROR', `${field}: ${issue}`, { status: 422, details: [{ field, issue }] });
}

/**
 * An XML prolog (declaration, comments, processing instructions, a DOCTYPE with or without an internal
 * subset) and then the svg root. Which DOCTYPEs are acceptable is decided in prepareSvg, with a reason.
 */
const SVG_HEAD =
  /^\s*(<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*|<\?[\s\S]*?\?>\s*|<!DOCTYPE\s+svg\b(?:[^[>]|"[^"]*"|'[^']*')*(?:\[[\s\S]*?\]\s*)?>\s*)*<svg[\s>]/i;

function looksLikeSvg(bytes: Uint8Array): boolean {
  // 64 KB: room for a DOCTYPE's internal subset before the root.
  const head = Buffer.from(bytes.subarray(0, 64 * 1024))
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  return SVG_HEAD.test(head);
}

/**
 * Recognises and measures an image; anything that is not PNG, JPEG, GIF or SVG is a 422 naming `field`.
 * An SVG's fallback raster is drawn in a child process (`signal` stops it).
 */
export async function prepareImage(bytes: Uint8Array, field: string, description = '', signal?: AbortSignal): Promise<PreparedImage> {
  if (bytes.length === 0) throw unusable(field, 'the image is empty');
  if (looksLikeSvg(bytes)) return prepareSvg(bytes, field, description, signal);
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    throw unusable(field, 'the value is not a PNG, JPEG, GIF or SVG image');
  }
  // image-size knows SVGs this module's prolog check does not (odd prologs): say what is wrong with it.
  if (size.type === 'svg') return prepareSvg(bytes, field, description, signal);
  const type = size.type ? TYPES[size.type] : undefined;
  if (!type) throw unusable(field, `image type ${size.type ?? 'unknown'} is not supported (PNG, JPEG, GIF, SVG)`);
  let { width, height } = size;
  if (!width || !height) throw unusable(field, 'the image has no size');
  // JPEG EXIF orientations 5–8 rotate by 90°: the displayed box is transposed.
  if (size.orientation && size.orientation >= 5) [width, height] = [height, width];
  return { bytes, ...type, widthPx: width, heightPx: height, description };
}

/**
 * The DOCTYPE of an SVG, removed when harmless. A DOCTYPE naming the SVG DTD (what Inkscape and Illustrator
 * write) is only a label: nothing fetches the DTD, and the embedded copy goes without it (Word reads SVG
 * without one). Entity declarations are refused: they are how an XML file multiplies itself (billion laughs)
 * or reaches outside (external entities), and no drawing needs them.
 */
function withoutDoctype(svg: string, field: string): string {
  if (/<!ENTITY/i.test(svg)) throw unusable(field, 'the SVG declares XML entities (<!ENTITY>), which are refused');
  const m = /<!DOCTYPE\b(?:[^[>]|"[^"]*"|'[^']*')*(\[[\s\S]*?\]\s*)?>/i.exec(svg);
  if (!m) return svg;
  if (/<!DOCTYPE/i.test(svg.slice(m.index + m[0].length))) throw unusable(field, 'the SVG has more than one DOCTYPE');
  return svg.slice(0, m.index) + svg.slice(m.index + m[0].length);
}

async function prepareSvg(bytes: Uint8Array, field: string, description: string, signal?: AbortSignal): Promise<PreparedImage> {
  if (bytes.length > MAX_SVG_BYTES) throw unusable(field, 'the SVG is larger than 5 MB');
  let svg = withoutDoctype(Buffer.from(bytes).toString('utf8'), field);
  // Nothing outside the SVG is ever read: references to files or URLs are dropped before rasterising.
  svg = svg.replace(/<image\b[^>]*?\b(?:xlink:)?href\s*=\s*["'](?!data:)[^"']*["'][^>]*?(\/>|>[\s\S]*?<\/image>)/gi, '');
  // Twice the natural size (sharper when printed), never beyond MAX_RASTER_SIDE.
  const raster = await rasteriseSvg(svg, field, {
    maxSide: MAX_RASTER_SIDE,
    scale: 2,
    fontDirs: svgFontDirs(),
    defaultFontFamily: 'DejaVu Sans',
    signal,
  });
  return {
    bytes: raster.png,
    extension: 'png',
    contentType: 'image/png',
    svg: new Uint8Array(Buffer.from(svg, 'utf8')),
    widthPx: raster.width,
    heightPx: raster.height,
    description,
  };
}

const FONT_CANDIDATES = [
  // Script faces when the machine has one, else a serif italic that reads as handwriting well enough.
  '/usr/share/fonts/truetype/dancingscript/DancingScript-Regular.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSerif-Italic.ttf',
  '/usr/share/fonts/truetype/liberation2/LiberationSerif-Italic.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSerif-Italic.ttf',
];
/** Text in an SVG is drawn with the common free faces (not the whole system scan: its cost is per call). */
const SVG_FONT_DIRS = [
  '/usr/share/fonts/truetype/dejavu',
  '/usr/share/fonts/truetype/liberation2',
  '/usr/share/fonts/truetype/liberation',
  '/usr/share/fonts/truetype/crosextra',
];
let svgFontDirsCache: string[] | undefined;
function svgFontDirs(): string[] {
  svgFontDirsCache ??= SVG_FONT_DIRS.filter((d) => fs.existsSync(d));
  return svgFontDirsCache;
}

let fontFilesCache: string[] | undefined;
function fallbackFontFiles(): string[] {
  fontFilesCache ??= FONT_CANDIDATES.filter((f) => fs.existsSync(f));
  return fontFilesCache;
}

/**
 * A typed signature: the name in an italic (script when available) face over a signing line, as PNG.
 * Rendered with the font files above only, so it looks the same wherever the document is opened. Drawn in
 * this thread: the SVG is Folio's own (one line of at most 200 characters, no filters), so its cost is
 * known and small, unlike a caller's SVG.
 */
export function renderTypedSignature(name: string, field: string): PreparedImage {
  const clean = stripInvalidXmlChars(name).replace(/\s+/g, ' ').trim();
  if (!clean) throw unusable(field, 'the signature name is empty');
  if (clean.length > 200) throw unusable(field, 'the signature name is longer than 200 characters');
  const fontSize = 48;
  const width = Math.ceil(Math.max(160, clean.length * fontSize * 0.55 + 40));
  const height = 96;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<text x="20" y="62" font-family="Dancing Script, DejaVu Serif, Liberation Serif, serif" font-style="italic" font-size="${fontSize}" fill="#1a2a6c">${escapeText(clean)}</text>` +
    `<line x1="10" y1="78" x2="${width - 10}" y2="78" stroke="#555" stroke-width="1.5"/></svg>`;
  let png: Uint8Array;
  try {
    const r = new Resvg(svg, {
      font: { loadSystemFonts: false, fontFiles: fallbackFontFiles(), defaultFontFamily: 'DejaVu Serif' },
      fitTo: { mode: 'width', value: width * 2 },
    });
    png = r.render().asPng();
  } catch {
    throw unusable(field, 'the typed signature could not be rendered');
  }
  // Drawn at 60 % of the canvas (a signature line is about 0.6 inch tall); the raster has 3× that resolution.
  return {
    bytes: png,
    extension: 'png',
    contentType: 'image/png',
    widthPx: Math.round(width * 0.6),
    heightPx: Math.round(height * 0.6),
    description: `Signature of ${clean}`,
  };
}

export interface Box {
  cx: number;
  cy: number;
}

/** Parses a size in px given as a number or a string ("120", "120px"). */
export function pixels(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(px)?\s*$/i.exec(v);
    if (m) return Number(m[1]) > 0 ? Number(m[1]) : undefined;
  }
  return undefined;
}

/**
 * The drawn size in EMU: explicit dimensions (one side given keeps the aspect ratio), else fitted into the
 * control's existing box keeping the aspect ratio, else the natural size at 96 dpi, capped to `maxWidthEmu`.
 */
export function drawnSize(img: PreparedImage, dims: { width?: number; height?: number } | undefined, box: Box | undefined, maxWidthEmu: number): Box {
  const ratio = img.heightPx / img.widthPx;
  if (dims && (dims.width || dims.height)) {
    const w = dims.width ?? dims.height! / ratio;
    const h = dims.height ?? dims.width! * ratio;
    return { cx: Math.round(w * EMU_PER_PX), cy: Math.round(h * EMU_PER_PX) };
  }
  if (box && box.cx > 0 && box.cy > 0) {
    const scale = Math.min(box.cx / img.widthPx, box.cy / img.heightPx);
    return { cx: Math.round(img.widthPx * scale), cy: Math.round(img.heightPx * scale) };
  }
  let cx = img.widthPx * EMU_PER_PX;
  let cy = img.heightPx * EMU_PER_PX;
  if (cx > maxWidthEmu) {
    cy = Math.round((cy * maxWidthEmu) / cx);
    cx = maxWidthEmu;
  }
  return { cx: Math.round(cx), cy: Math.round(cy) };
}
