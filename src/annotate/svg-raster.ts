/**
 * The PNG fallback of an SVG image, made in a child process (svg-raster-child.ts) under bounded-child.ts's
 * limits: resvg is native code, and a filter-heavy SVG kept a core busy long after its request's 504 when
 * it ran on an engine thread (terminating a thread does not stop native code). Here it is SIGKILLed at its
 * time limit, and its address space and CPU time are capped. Called on an engine thread (annotate), the
 * child is started and reaped by the main thread (src/native/runner.ts) and SIGKILLed when the pool ends the
 * job, however it ends: a child started by the thread itself would die with a terminated thread but stay a
 * zombie until the server exits (only a live loop reaps its children).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FolioError } from '../errors.js';
import { runNative } from '../native/remote.js';

/** Wall-clock (and CPU) limit of one rasterisation: real SVGs take milliseconds; a filter bomb takes minutes. */
export const SVG_RASTER_TIMEOUT_MS = 10_000;
/**
 * Address-space cap of the child. Node reserves ~700 MB of address space before it runs anything (V8's code
 * range and heap cage), so this leaves ~800 MB for the SVG tree, a 2000² RGBA canvas and filter buffers.
 * Not applied when run from source: tsx's WebAssembly lexer reserves 10 GB of address space for its memory.
 */
const SVG_RASTER_ADDRESS_SPACE = 1536 * 1024 * 1024;
/** False once Node was seen failing to start under the cap (see rasteriseSvg). */
let addressSpaceCapWorks = true;
/** A 2000 × 2000 PNG is at most ~16 MB uncompressed; more from the child is not a PNG of ours. */
const MAX_PNG_BYTES = 32 * 1024 * 1024;

export interface SvgRaster {
  png: Uint8Array;
  /** The SVG's natural size in px. */
  width: number;
  height: number;
}

/** The child entry beside this module: .js when compiled, .ts through tsx when run from source. */
function childEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  return { file: path.join(path.dirname(here), `svg-raster-child${ext}`), execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
}

function unusable(field: string, issue: string): FolioError {
  return new FolioError('VALIDATION_ERROR', `${field}: ${issue}`, { status: 422, details: [{ field, issue }] });
}

/**
 * Rasterises `svg` at up to `scale`× its natural size, never beyond `maxSide` px. Throws the field's 422
 * when resvg cannot read it or it does not finish within its limits (time, CPU, memory).
 */
export async function rasteriseSvg(
  svg: string,
  field: string,
  opts: { maxSide: number; scale: number; fontDirs: string[]; defaultFontFamily: string; signal?: AbortSignal },
): Promise<SvgRaster> {
  const entry = childEntry();
  const { signal, ...childOpts } = opts;
  const args = [...entry.execArgv, '--max-old-space-size=128', entry.file, JSON.stringify(childOpts)];
  const run = (addressSpaceBytes: number | undefined) =>
    runNative(process.execPath, args, {
      input: Buffer.from(svg, 'utf8'),
      timeoutMs: SVG_RASTER_TIMEOUT_MS,
      addressSpaceBytes,
      maxOutputBytes: MAX_PNG_BYTES,
      signal,
      // tsx (from source) needs a writable cache; nothing else of the API's environment is passed on.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}) },
    });
  let r = await run(entry.execArgv.length > 0 || !addressSpaceCapWorks ? undefined : SVG_RASTER_ADDRESS_SPACE);
  if (r.code !== 0 && r.stdout.length === 0 && /Failed to reserve virtual memory/.test(r.stderr)) {
    // This Node reserves more address space at start than the cap allows (another version, another V8):
    // the cap is dropped for this process's lifetime; the time and CPU limits still hold.
    addressSpaceCapWorks = false;
    r = await run(undefined);
  }
  if (r.stopped === 'aborted') throw new FolioError('SERVICE_UNAVAILABLE', 'The request was abandoned', { retryAfter: 1 });
  if (r.stopped === 'timeout' || r.signal === 'SIGXCPU' || r.signal === 'SIGKILL') {
    throw unusable(field, `the SVG takes too long to draw (over ${SVG_RASTER_TIMEOUT_MS / 1000} s: filters or shapes too costly)`);
  }
  if (r.stopped === 'output') throw unusable(field, 'the SVG cannot be drawn within the size limit');
  if (r.code === 2) throw unusable(field, 'the SVG cannot be read');
  if (r.code !== 0 || r.stdout.length < 8 + 8) {
    // Out of its memory cap (resvg aborts on a failed allocation) or killed by a signal.
    throw unusable(field, 'the SVG cannot be drawn within the memory limit');
  }
  return { width: r.stdout.readUInt32BE(0), height: r.stdout.readUInt32BE(4), png: new Uint8Array(r.stdout.subarray(8)) };
}
