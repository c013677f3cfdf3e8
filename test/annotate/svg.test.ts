/**
 * SVG images in annotate (issue 23): the PNG fallback is drawn by resvg in a bounded child process
 * (src/annotate/svg-raster.ts over src/native/bounded-child.ts), so a filter that would keep a core busy for
 * minutes is stopped at its time limit with a 422 naming the reason, and nothing is left running. An SVG
 * with a DOCTYPE is an SVG: the label is dropped and the image accepted; entity declarations are refused by
 * name; an SVG resvg cannot read is a 422, never a 500.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { annotateDocx, type AnnotateField } from '../../src/annotate/index.js';
import { SVG_RASTER_TIMEOUT_MS } from '../../src/annotate/svg-raster.js';
import { FolioError } from '../../src/errors.js';
import { templateDocx } from '../adversarial/generators.js';
import { heavySvg } from '../amplification/native-inputs.js';
import { unpack } from './helpers.js';

const svgField = (svg: string): AnnotateField[] => [
  { id: 'name', type: 'image', value: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` },
];
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );

const CIRCLE = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><circle cx="30" cy="30" r="25" fill="#36c"/></svg>';

/** Children of this process still running (not zombies), by command line. */
function runningChildren(): string[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'stat=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when no process matched
  }
  return out.split('\n').filter((l) => l.trim() && !l.trim().startsWith('Z') && !l.includes('ps -o'));
}

describe('annotate: SVG images', () => {
  it('an SVG with the SVG 1.1 DOCTYPE is accepted; the embedded copy goes without it', async () => {
    const svg =
      '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' +
      CIRCLE;
    const { docx, report } = await annotateDocx(templateDocx(), svgField(svg));
    expect(report.filled.map((f) => f.id)).toContain('name');
    const u = unpack(docx);
    const svgPart = Object.keys(u.files).find((n) => n.endsWith('.svg'))!;
    const pngPart = Object.keys(u.files).find((n) => n.startsWith('word/media/') && n.endsWith('.png'))!;
    expect(Buffer.from(u.files[svgPart]!).toString()).not.toMatch(/DOCTYPE/);
    expect(Buffer.from(u.files[svgPart]!).toString()).toContain('<circle');
    // The fallback is a real raster of the drawing: 2× its 120 × 60 natural size.
    const png = Buffer.from(u.files[pngPart]!);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([240, 120]);
  });

  it('a DOCTYPE with an internal subset but no entities is accepted too', async () => {
    const svg = '<!DOCTYPE svg [ <!ATTLIST svg xmlns:xlink CDATA #FIXED "http://www.w3.org/1999/xlink"> ]>' + CIRCLE;
    const { report } = await annotateDocx(templateDocx(), svgField(svg));
    expect(report.filled.map((f) => f.id)).toContain('name');
  });

  it('entity declarations are refused, and the message says so (not "svg is not supported")', async () => {
    const svg =
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>' +
      CIRCLE.replace('</svg>', '<text>&b;</text></svg>');
    const e = await refusal(annotateDocx(templateDocx(), svgField(svg)));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).status).toBe(422);
    expect((e as FolioError).message).toMatch(/entities \(<!ENTITY>\), which are refused/);
    expect((e as FolioError).message).not.toMatch(/not supported/);
  });

  it('an SVG resvg cannot read is a 422 naming the field', async () => {
    const e = await refusal(annotateDocx(templateDocx(), svgField('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g></svg>')));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).status).toBe(422);
    expect((e as FolioError).message).toMatch(/^fields\[0\]\.value: the SVG cannot be read/);
  });

  it(`a filter that would take minutes is stopped at ${SVG_RASTER_TIMEOUT_MS / 1000} s with a 422, leaving no process behind`, async () => {
    const t0 = performance.now();
    const e = await refusal(annotateDocx(templateDocx(), svgField(heavySvg())));
    const ms = performance.now() - t0;
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).status).toBe(422);
    expect((e as FolioError).message).toMatch(/the SVG takes too long to draw/);
    // Generous upper bound: the child is killed at its limit, not left to finish.
    expect(ms).toBeLessThan(SVG_RASTER_TIMEOUT_MS + 15_000);
    expect(runningChildren().filter((l) => l.includes('svg-raster-child'))).toEqual([]);
  }, 60_000);
});
