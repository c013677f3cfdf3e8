/**
 * Child-process entry that rasterises one SVG with resvg (svg-raster.ts starts it under bounded-child.ts's
 * limits, from the main thread: src/native/runner.ts). resvg is native code: in a thread it cannot be stopped, in this process it dies with a SIGKILL.
 *
 * In: the SVG on stdin, the options as JSON in argv[2]. Out: 8 bytes (natural width and height in px,
 * big-endian uint32) then the PNG on stdout, exit 0; exit 2 with a short reason on stderr when resvg cannot
 * read the SVG.
 */
import { Resvg } from '@resvg/resvg-js';

interface ChildOptions {
  /** Longest side of the raster in pixels. */
  maxSide: number;
  /** How much larger than the natural size to rasterise (sharper when printed). */
  scale: number;
  fontDirs: string[];
  defaultFontFamily: string;
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
  const svg = (await readStdin()).toString('utf8');
  let header: Buffer;
  let png: Buffer;
  try {
    const probe = new Resvg(svg, { font: { loadSystemFonts: false }, fitTo: { mode: 'original' } });
    const width = Math.max(1, Math.round(probe.width));
    const height = Math.max(1, Math.round(probe.height));
    const scale = Math.min(opts.scale, opts.maxSide / Math.max(width, height));
    const target = Math.max(1, Math.round(width * scale));
    const renderer = new Resvg(svg, {
      font: { loadSystemFonts: false, fontDirs: opts.fontDirs, defaultFontFamily: opts.defaultFontFamily },
      fitTo: { mode: 'width', value: target },
    });
    png = renderer.render().asPng();
    header = Buffer.alloc(8);
    header.writeUInt32BE(width, 0);
    header.writeUInt32BE(height, 4);
  } catch (e) {
    process.stderr.write(String((e as Error).message ?? e).slice(0, 300));
    process.exitCode = 2;
    return;
  }
  process.stdout.write(header);
  process.stdout.write(png);
}

void main();
