/** PDF previews with pdf.js; its worker is bundled by Vite and served from this origin (no CDN). */
import * as pdfjs from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;

/**
 * Renders pages of a PDF into `container` as canvases: the first `count` pages, or with `last` the last
 * `count` pages. Returns the number of pages of the document.
 */
export async function renderPdf(container: HTMLElement, bytes: Uint8Array, opts: { count: number; last?: boolean; label: string }): Promise<number> {
  container.replaceChildren();
  // pdf.js transfers the buffer to its worker: give it a copy.
  const doc = await pdfjs.getDocument({ data: bytes.slice(), isEvalSupported: false }).promise;
  try {
    const n = doc.numPages;
    const first = opts.last ? Math.max(1, n - opts.count + 1) : 1;
    const end = opts.last ? n : Math.min(n, opts.count);
    for (let i = first; i <= end; i++) {
      const page = await doc.getPage(i);
      const viewport = page.getViewport({ scale: 1 });
      const canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', `${opts.label}: page ${i} of ${n}`);
      canvas.dataset.page = String(i);
      container.append(canvas);
      await page.render({ canvas, viewport }).promise;
    }
    return n;
  } finally {
    await doc.destroy();
  }
}
