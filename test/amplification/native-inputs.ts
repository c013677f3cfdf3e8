/**
 * Inputs that make native code (poppler's pdftoppm, resvg) expensive, built in code (issue 23): a page far
 * taller than wide (its image at 4000 px wide is gigabytes), pages slow to draw (thousands of full-page
 * fills sharing one content stream, so the file stays small), and an SVG whose filter costs minutes of CPU.
 * Shared by the amplification suite (native.test.ts), the preview and annotate tests and the before/after
 * measurement (native-measure.ts).
 */
import { buildPdf, templateDocx } from '../adversarial/generators.js';

/** One page of `width` × `height` PDF units, declared on the page tree node (inherited), nothing drawn. */
export function tallPdf(width = 200, height = 8800, pages = 1): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(' ');
  return buildPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} /MediaBox [0 0 ${width} ${height}] >>`,
    ...Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R >>'),
  ]);
}

/**
 * `pages` A4 pages that each fill the whole page `fills` times (grey levels alternate, so nothing is
 * skipped): about 1 s of pdftoppm CPU per 300 fills at 800 px wide on a 2020 laptop core.
 */
export function slowPdf(pages: number, fills: number): Buffer {
  const ops = Array.from({ length: fills }, (_, i) => `${(i % 7) / 7} g 0 0 595 842 re f`).join('\n');
  const kids = Array.from({ length: pages }, (_, i) => `${4 + i} 0 R`).join(' ');
  return buildPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} /MediaBox [0 0 595 842] >>`,
    `<< /Length ${ops.length} >>\nstream\n${ops}\nendstream`,
    ...Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>'),
  ]);
}

/** An SVG whose dilation filter (radius 150, doubled by the 2× raster) keeps resvg busy for minutes. */
export function heavySvg(): string {
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="1000">' +
    '<filter id="f" x="0" y="0" width="1" height="1"><feMorphology operator="dilate" radius="150"/></filter>' +
    '<g filter="url(#f)"><circle cx="500" cy="500" r="300" fill="red"/></g></svg>'
  );
}

/** An /v1/annotate body filling the honest template's `name` placeholder with an SVG image. */
export function annotateSvgBody(svg: string): string {
  return JSON.stringify({
    document: { base64: templateDocx().toString('base64') },
    fields: [{ id: 'name', type: 'image', value: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }],
  });
}
