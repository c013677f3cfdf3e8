/**
 * Page previews (issue 17): pages of a PDF rendered to PNG or JPEG by poppler's `pdftoppm`, run as a bounded
 * child process: no shell, argument list fixed here (no request value reaches it but validated integers), a
 * time limit, a cap on the bytes it may write, killed when the client leaves.
 *
 * Documents never touch the disk: the PDF goes to `pdftoppm -` on stdin and the images come back on stdout
 * (without an output root, pdftoppm writes every page to stdout, one image after the other), which are split
 * here by their own structure (PNG chunks, JPEG markers). One process per contiguous run of requested pages.
 *
 * Pages beyond the document are a 422 (UNPROCESSABLE_DOCUMENT, naming the page and the page count), not a
 * silent clamp: a caller that asked for page 7 of a 5-page document gets told rather than handed fewer files.
 */
import { spawn } from 'node:child_process';
import { FolioError, type ErrorDetail } from '../errors.js';

export const PREVIEW_DEFAULT_WIDTH = 800;
export const PREVIEW_MAX_WIDTH = 4000;
export const PREVIEW_MAX_PAGES = 50;
/** Output bytes one call may produce, all pages together. */
export const PREVIEW_MAX_BYTES = 256 * 1024 * 1024;
export const PREVIEW_TIMEOUT_MS = 60_000;

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

/** Renders the requested pages of `pdf`; throws 422 for a PDF poppler cannot read or pages it does not have. */
export async function renderPdfPages(pdf: Uint8Array, format: PreviewFormat, req: PreviewRequest, signal?: AbortSignal): Promise<RenderedPage[]> {
  const out: RenderedPage[] = [];
  const budget = { left: PREVIEW_MAX_BYTES };
  for (const [first, last] of runsOf(req.pages)) {
    const images = await runPdftoppm(pdf, format, req.width, first, last, budget, signal);
    if (images.length < last - first + 1) {
      const count = first + images.length - 1;
      throw pagesBeyond(first + images.length, count);
    }
    images.forEach((bytes, i) => out.push({ page: first + i, bytes }));
  }
  return out;
}

function pagesBeyond(page: number, count: number | undefined): FolioError {
  const has = count === undefined ? '' : ` (it has ${count} page${count === 1 ? '' : 's'})`;
  return new FolioError('UNPROCESSABLE_DOCUMENT', `Page ${page} is beyond the end of the document${has}`, {
    details: [{ field: 'pages', issue: `page ${page} does not exist${has}` }],
  });
}

function runPdftoppm(
  pdf: Uint8Array,
  format: PreviewFormat,
  width: number,
  first: number,
  last: number,
  budget: { left: number },
  signal?: AbortSignal,
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
  return new Promise((resolve, reject) => {
    const child = spawn('pdftoppm', args, { stdio: ['pipe', 'pipe', 'pipe'], shell: false, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const chunks: Buffer[] = [];
    let stderr = '';
    let failure: FolioError | undefined;
    const stop = (e: FolioError) => {
      failure ??= e;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => stop(new FolioError('CONVERSION_TIMEOUT', `Rendering the previews took longer than ${PREVIEW_TIMEOUT_MS / 1000} s`)),
      PREVIEW_TIMEOUT_MS,
    );
    const onAbort = () => stop(new FolioError('UNPROCESSABLE_DOCUMENT', 'The client went away'));
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      budget.left -= d.length;
      if (budget.left < 0) {
        stop(
          new FolioError(
            'UNPROCESSABLE_DOCUMENT',
            `The previews exceed ${PREVIEW_MAX_BYTES / 1024 / 1024} MB; ask for fewer pages or a smaller width`,
            {
              details: [{ field: 'pages', issue: 'the rendered images are too large together' }],
            },
          ),
        );
      } else chunks.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    child.stdin.on('error', () => {}); // pdftoppm may exit before reading everything (broken input)
    child.on('error', (e) =>
      stop(new FolioError('SERVICE_UNAVAILABLE', 'The page renderer (poppler pdftoppm) is not available', { cause: e, retryAfter: 30 })),
    );
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      // "Wrong page range given: the first page (5) can not be after the last page (3)."
      const range = /first page \((\d+)\) can not be after the last page \((\d+)\)/.exec(stderr);
      if (range) return reject(pagesBeyond(first, Number(range[2])));
      if (code !== 0) return reject(new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (it is damaged or not a PDF)'));
      const all = Buffer.concat(chunks);
      try {
        const images = format === 'png' ? splitPngs(all) : splitJpegs(all);
        if (images.length === 0) return reject(new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (no page came out)'));
        resolve(images);
      } catch {
        reject(new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF could not be rendered (the renderer wrote an unreadable image)'));
      }
    });
    child.stdin.end(pdf);
  });
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
