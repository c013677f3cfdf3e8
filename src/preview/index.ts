/**
 * Page previews (issue 17): pages of a PDF rendered to PNG or JPEG by poppler's `pdftoppm`, run as a bounded
 * child process (src/native/bounded-child.ts): no shell, argument list fixed here (no request value reaches it
 * but validated integers), an address-space cap (PREVIEW_MEMORY_MB), a time limit per page run capped by the
 * request's one deadline, the bytes it may write capped by the request's output budget (OUTPUT_MAX_MB),
 * killed when the client leaves. Before anything is rendered the page sizes are read (page-sizes.ts) and a
 * page whose image would pass the pixel budget (PREVIEW_MAX_MEGAPIXELS) is refused; renders take a turn from
 * the office pool's admission (admission.ts), so renders and conversions together stay within the workers.
 * A page poppler could not allocate comes out as a 1×1 image with exit status 0: every image's dimensions
 * are checked against what was asked, and such a page is a 422, never a 200.
 *
 * Documents never touch the disk: the PDF goes to `pdftoppm -` on stdin and the images come back on stdout
 * (without an output root, pdftoppm writes every page to stdout, one image after the other), which are split
 * here by their own structure (PNG chunks, JPEG markers). One process per contiguous run of requested pages.
 *
 * Pages beyond the document are a 422 (UNPROCESSABLE_DOCUMENT, naming the page and the page count), not a
 * silent clamp: a caller that asked for page 7 of a 5-page document gets told rather than handed fewer files.
 */
import { OutputBudget, outputTooLarge, type Deadline } from '../budget/index.js';
import { FolioError, isFolioError, type ErrorDetail } from '../errors.js';
import { runBounded } from '../native/bounded-child.js';
import { localAdmission, type RenderAdmission } from './admission.js';
import { pageSizes, renderedHeight, type PageSize } from './page-sizes.js';

export { localAdmission, renderAdmission, type RenderAdmission } from './admission.js';
export { pageSizes, type PageSize } from './page-sizes.js';

export const PREVIEW_DEFAULT_WIDTH = 800;
export const PREVIEW_MAX_WIDTH = 4000;
export const PREVIEW_MAX_PAGES = 50;
/** Output bytes one call may produce, all pages together (OUTPUT_MAX_MB lowers it). */
export const PREVIEW_MAX_BYTES = 256 * 1024 * 1024;
/** Time limit of one contiguous page run (one pdftoppm process); the request's deadline caps it. */
export const PREVIEW_TIMEOUT_MS = 60_000;
/** Defaults of PREVIEW_MAX_MEGAPIXELS and PREVIEW_MEMORY_MB (src/config) for callers without a Config. */
export const PREVIEW_MAX_PIXELS = 50_000_000;
export const PREVIEW_MEMORY_BYTES = 1024 * 1024 * 1024;

export type PreviewFormat = 'png' | 'jpeg';

export interface PreviewRequest {
  width: number;
  /** 1-based page numbers, ascending, distinct. */
  pages: number[];
}

export interface RenderedPage {
  page: number;
  bytes: Uint8Array;
}

export interface RenderOptions {
  /** The client went away: the render is killed. */
  signal?: AbortSignal;
  /** The request's one deadline: each page run gets `deadline.cap(PREVIEW_TIMEOUT_MS)`; spent → 504. */
  deadline?: Deadline;
  /** Bytes all page images together may take (OUTPUT_MAX_MB; never more than PREVIEW_MAX_BYTES). */
  outputMaxBytes?: number;
  /** Pixels one page image may have (PREVIEW_MAX_MEGAPIXELS). */
  maxPixels?: number;
  /** Address-space cap of pdftoppm (PREVIEW_MEMORY_MB). */
  memoryBytes?: number;
  /** Where a render takes its turn (the office pool's admission); default: one render at a time. */
  admission?: RenderAdmission;
  /**
   * Reads the page sizes (the API does it on the engine pool, off the event loop); default: in this thread.
   * null or undefined: unknown (the render still runs under its memory cap, its dimensions checked after).
   */
  measure?: (pdf: Uint8Array, pages: number[]) => Promise<Array<PageSize | null | undefined>>;
}

/** Turns for callers that pass no admission (the CLI's local mode): one render at a time. */
const defaultAdmission = localAdmission(1);

/** `width` and `pages` as sent (strings or absent) → a checked request; 400 VALIDATION_ERROR with details. */
export function parsePreviewOptions(width: string | undefined, pages: string | undefined): PreviewRequest {
  const details: ErrorDetail[] = [];
  let w = PREVIEW_DEFAULT_WIDTH;
  if (width !== undefined) {
    w = /^[0-9]{1,9}$/.test(width) ? Number(width) : NaN;
    if (!Number.isInteger(w) || w < 1) details.push({ field: 'width', issue: 'must be a whole number of pixels, at least 1' });
    else if (w > PREVIEW_MAX_WIDTH) details.push({ field: 'width', issue: `must be at most ${PREVIEW_MAX_WIDTH} px` });
  }
  let list: number[] = [1];
  if (pages !== undefined) {
    const parsed = parsePageRanges(pages);
    if (typeof parsed === 'string') details.push({ field: 'pages', issue: parsed });
    else list = parsed;
  }
  if (details.length) throw new FolioError('VALIDATION_ERROR', `Invalid preview options: ${details.map((d) => d.field).join(', ')}`, { details });
  return { width: w, pages: list };
}

/** "1-3,5" → [1,2,3,5]; a string saying what is wrong otherwise. At most PREVIEW_MAX_PAGES pages. */
export function parsePageRanges(spec: string): number[] | string {
  const set = new Set<number>();
  const parts = spec.split(',');
  if (spec.length > 400) return 'too long';
  for (const raw of parts) {
    const part = raw.trim();
    const m = /^([0-9]{1,6})(?:-([0-9]{1,6}))?$/.exec(part);
    if (!m) return `"${part}" is not a page number or a range like 1-3 (pages are numbered from 1)`;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b < 1) return 'pages are numbered from 1';
    if (b < a) return `the range ${part} runs backwards`;
    if (b - a + 1 > PREVIEW_MAX_PAGES) return `at most ${PREVIEW_MAX_PAGES} pages per call`;
    for (let p = a; p <= b; p++) set.add(p);
    if (set.size > PREVIEW_MAX_PAGES) return `at most ${PREVIEW_MAX_PAGES} pages per call`;
  }
  return [...set].sort((x, y) => x - y);
}

/** Contiguous runs of a sorted page list: [1,2,3,5] → [[1,3],[5,5]]. */
function runsOf(pages: number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const p of pages) {
    const last = runs[runs.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else runs.push([p, p]);
  }
  return runs;
}

/**
 * Renders the requested pages of `pdf`; throws 422 for a PDF poppler cannot read, pages it does not have, a
 * page over the pixel budget or one it could not allocate, and 504 when the request's deadline is spent.
 */
export async function renderPdfPages(pdf: Uint8Array, format: PreviewFormat, req: PreviewRequest, opts: RenderOptions = {}): Promise<RenderedPage[]> {
  const { deadline, signal } = opts;
  const maxPixels = opts.maxPixels ?? PREVIEW_MAX_PIXELS;
  let measured: Array<PageSize | null | undefined>;
  try {
    measured = await (opts.measure ?? (async (bytes, pages) => pageSizes(bytes, pages)))(pdf, req.pages);
  } catch (e) {
    // The PDF core refused the file (unreadable, over the reader's bounds, or over the engine thread's heap):
    // the same answer sign and merge give, before poppler runs.
    if (isFolioError(e) && (e.code === 'UNPROCESSABLE_DOCUMENT' || e.code === 'INVALID_FILE_FORMAT')) throw e;
    // Otherwise the sizes are a precaution, not a precondition: a reader job that timed out or a busy engine
    // pool leaves them unknown, and the render's own caps still hold.
    if (signal?.aborted) throw e;
    deadline?.check('reading the page sizes');
    measured = [];
  }
  const sizes = new Map<number, PageSize>();
  req.pages.forEach((page, i) => {
    const size = measured[i];
    if (!size) return;
    sizes.set(page, size);
    const height = renderedHeight(size, req.width);
    if (req.width * height > maxPixels) throw overPixelBudget(page, req.width, height, maxPixels);
  });
  deadline?.check('rendering page previews');
  const budget = new OutputBudget(Math.min(PREVIEW_MAX_BYTES, opts.outputMaxBytes ?? PREVIEW_MAX_BYTES), 'page images');
  const release = await (opts.admission ?? defaultAdmission).acquireRenderSlot({ signal, deadline });
  try {
    const out: RenderedPage[] = [];
    for (const [first, last] of runsOf(req.pages)) {
      // Every run draws from the one deadline: six slow runs cannot take six times the run limit.
      deadline?.check('rendering page previews');
      const images = await runPdftoppm(pdf, format, req.width, first, last, budget, opts);
      if (images.length < last - first + 1) {
        const count = first + images.length - 1;
        throw pagesBeyond(first + images.length, count);
      }
      images.forEach((bytes, i) => {
        checkDimensions(bytes, format, first + i, req.width, sizes.get(first + i));
        out.push({ page: first + i, bytes });
      });
    }
    return out;
  } finally {
    release();
  }
}

function overPixelBudget(page: number, width: number, height: number, maxPixels: number): FolioError {
  const mp = (n: number) => `${Math.round(n / 100_000) / 10} megapixels`;
  return new FolioError(
    'UNPROCESSABLE_DOCUMENT',
    `Page ${page} would be ${width} × ${height} px (${mp(width * height)}) at width ${width}; a page image may have at most ${mp(maxPixels)} (PREVIEW_MAX_MEGAPIXELS). Ask for a smaller width`,
    { details: [{ field: 'width', issue: `page ${page} would be over ${mp(maxPixels)} at this width` }] },
  );
}

/** The failed page's answer: poppler could not allocate its bitmap (over its memory cap or its own size limit). */
function notRendered(page: number, width: number): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `Page ${page} could not be rendered at width ${width} within the renderer's memory limit`, {
    details: [{ field: 'width', issue: `page ${page} is too large to render at ${width} px` }],
  });
}

/**
 * poppler answers a page it could not allocate with a 1×1 image and exit status 0: the image must have the
 * width asked for (±1 for rounding) and, when the page size is known, the height that follows from it.
 */
function checkDimensions(bytes: Uint8Array, format: PreviewFormat, page: number, width: number, size: PageSize | undefined): void {
  const dims = format === 'png' ? pngDimensions(bytes) : jpegDimensions(bytes);
  if (!dims || Math.abs(dims.width - width) > 1) throw notRendered(page, width);
  if (size && Math.abs(dims.height - renderedHeight(size, width)) > 2) throw notRendered(page, width);
}

/** Width and height from a PNG's IHDR (the first chunk, at a fixed offset). */
export function pngDimensions(b: Uint8Array): { width: number; height: number } | undefined {
  if (b.length < 24) return undefined;
  const v = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (v.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: v.readUInt32BE(16), height: v.readUInt32BE(20) };
}

/** Width and height from a JPEG's start-of-frame segment (markers C0–CF but C4, C8, CC). */
export function jpegDimensions(b: Uint8Array): { width: number; height: number } | undefined {
  const v = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let i = 2;
  while (i + 9 < v.length) {
    if (v[i] !== 0xff) return undefined;
    const marker = v[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: v.readUInt16BE(i + 5), width: v.readUInt16BE(i + 7) };
    }
    i += 2 + v.readUInt16BE(i + 2);
  }
  return undefined;
}

function pagesBeyond(page: number, count: number | undefined): FolioError {
  const has = count === undefined ? '' : ` (it has ${count} page${count === 1 ? '' : 's'})`;
  return new FolioError('UNPROCESSABLE_DOCUMENT', `Page ${page} is beyond the end of the document${has}`, {
    details: [{ field: 'pages', issue: `page ${page} does not exist${has}` }],
  });
}

async function runPdftoppm(
  pdf: Uint8Array,
  format: PreviewFormat,
  width: number,
  first: number,
  last: number,
  budget: OutputBudget,
  opts: RenderOptions,
): Promise<Uint8Array[]> {
  const args = [
    format === 'png' ? '-png' : '-jpeg',
    ...(format === 'jpeg' ? ['-jpegopt', 'quality=85'] : []),
    '-f',
    String(first),
    '-l',
    String(last),
    '-scale-to-x',
    String(width),
    '-scale-to-y',
    '-1',
    '-',
  ];
  const timeoutMs = opts.deadline ? opts.deadline.cap(PREVIEW_TIMEOUT_MS) : PREVIEW_TIMEOUT_MS;
  let r: Awaited<ReturnType<typeof runBounded>>;
  try {
    r = await runBounded('pdftoppm', args, {
      input: pdf,
      timeoutMs,
      addressSpaceBytes: opts.memoryBytes ?? PREVIEW_MEMORY_BYTES,
      // What is left of the request's output budget: past it the child is killed as it writes.
      maxOutputBytes: budget.limitBytes - budget.usedBytes,
      signal: opts.signal,
    });
  } catch (e) {
    throw new FolioError('SERVICE_UNAVAILABLE', 'The page renderer (poppler pdftoppm) is not available', { cause: e, retryAfter: 30 });
  }
  if (r.stopped === 'timeout') {
    if (opts.deadline && timeoutMs < PREVIEW_TIMEOUT_MS) throw opts.deadline.error('rendering page previews');
    throw new FolioError('CONVERSION_TIMEOUT', `Rendering the previews took longer than ${PREVIEW_TIMEOUT_MS / 1000} s`);
  }
  if (r.stopped === 'aborted') throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The client went away');
  if (r.stopped === 'output') throw outputTooLarge(budget.limitBytes, 'page images');
  // setpriv/prlimit report a command they could not start with 127.
  if (r.code === 127 && /failed to execute/.test(r.stderr)) {
    throw new FolioError('SERVICE_UNAVAILABLE', 'The page renderer (poppler pdftoppm) is not available', { retryAfter: 30 });
  }
  // "Wrong page range given: the first page (5) can not be after the last page (3)."
  const range = /first page \((\d+)\) can not be after the last page \((\d+)\)/.exec(r.stderr);
  if (range) throw pagesBeyond(first, Number(range[2]));
  // Out of its address space (poppler prints "Out of memory", or a C++ allocation aborts the process).
  if (/Out of memory|Bogus memory allocation|bad_alloc/i.test(r.stderr) && (r.code !== 0 || r.stdout.length === 0)) throw notRendered(first, width);
  // An encrypted PDF that needs a password to open (one with an empty user password renders).
  if (r.code !== 0 && /Incorrect password/i.test(r.stderr)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF is encrypted with a password; remove the encryption (or password) before previewing it');
  }
  if (r.code !== 0) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (it is damaged or not a PDF)');
  let images: Uint8Array[];
  try {
    images = format === 'png' ? splitPngs(r.stdout) : splitJpegs(r.stdout);
  } catch {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (the renderer wrote an unreadable image)');
  }
  if (images.length === 0) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (no page came out)');
  budget.add(r.stdout.length);
  return images;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Concatenated PNG files → each file, by walking their chunks to IEND. */
export function splitPngs(buf: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  while (i < buf.length) {
    if (!buf.subarray(i, i + 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG');
    let j = i + 8;
    for (;;) {
      if (j + 12 > buf.length) throw new Error('truncated PNG');
      const len = buf.readUInt32BE(j);
      const type = buf.toString('latin1', j + 4, j + 8);
      j += 12 + len;
      if (type === 'IEND') break;
    }
    if (j > buf.length) throw new Error('truncated PNG');
    out.push(buf.subarray(i, j));
    i = j;
  }
  return out;
}

/** Concatenated baseline JPEG files → each file: marker segments by their lengths, entropy data to EOI. */
export function splitJpegs(buf: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  while (i < buf.length) {
    if (buf[i] !== 0xff || buf[i + 1] !== 0xd8) throw new Error('not a JPEG');
    let j = i + 2;
    for (;;) {
      if (j + 2 > buf.length) throw new Error('truncated JPEG');
      if (buf[j] !== 0xff) throw new Error('bad JPEG marker');
      const marker = buf[j + 1]!;
      if (marker === 0xd9) {
        j += 2;
        break;
      }
      if (marker === 0xff) {
        j++; // fill byte
        continue;
      }
      if (j + 4 > buf.length) throw new Error('truncated JPEG');
      const len = buf.readUInt16BE(j + 2);
      j += 2 + len;
      if (marker === 0xda) {
        // Entropy-coded data: FF 00 is a data byte, FF D0–D7 a restart marker; any other FF xx ends it.
        while (j + 1 < buf.length && !(buf[j] === 0xff && buf[j + 1] !== 0 && (buf[j + 1]! < 0xd0 || buf[j + 1]! > 0xd7))) j++;
      }
    }
    if (j > buf.length) throw new Error('truncated JPEG');
    out.push(buf.subarray(i, j));
    i = j;
  }
  return out;
}
