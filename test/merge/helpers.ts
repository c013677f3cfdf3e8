/**
 * Helpers for the merge tests: input PDFs with recognisable text per page, the multipart call, and readers
 * nobody here wrote (poppler's pdfinfo/pdftotext, qpdf's JSON) to check what came out.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, PDFName, StandardFonts } from '@cantoo/pdf-lib';
import { authed, type TestApi } from '../helpers/api.js';

/** A PDF whose page i (from 1) reads `<tag> page <i>`. */
export async function taggedPdf(tag: string, pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage([595.28, 841.89]);
    page.drawText(`${tag} page ${i}`, { x: 40, y: 780, size: 14, font });
  }
  return doc.save({ useObjectStreams: false });
}

export interface Upload {
  bytes: Uint8Array;
  name: string;
  type?: string;
}

export async function mergeMultipart(t: TestApi, files: Upload[], fields: Record<string, string> = {}, auth = true): Promise<Response> {
  const form = new FormData();
  for (const f of files) form.append('files', new Blob([new Uint8Array(f.bytes)], { type: f.type ?? 'application/pdf' }), f.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const init: RequestInit = { method: 'POST', body: form };
  return fetch(`${t.url}/v1/merge`, auth ? authed(t, init) : init);
}

export async function mergeJson(t: TestApi, body: unknown): Promise<Response> {
  return fetch(`${t.url}/v1/merge`, authed(t, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
}

function withFile<T>(pdf: Uint8Array, fn: (file: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-merge-'));
  const file = path.join(dir, 'in.pdf');
  fs.writeFileSync(file, pdf);
  try {
    return fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Page count by poppler's pdfinfo. */
export const pdfinfoPages = (pdf: Uint8Array): number =>
  withFile(pdf, (f) => Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [f], { encoding: 'utf8' }))![1]));

/** The text of each page by poppler's pdftotext (form feeds separate pages). */
export const pageTexts = (pdf: Uint8Array): string[] =>
  withFile(pdf, (f) =>
    execFileSync('pdftotext', ['-layout', f, '-'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\f')
      .slice(0, -1),
  );

export interface QpdfOutline {
  title: string;
  destpageposfrom1: number | null;
  kids: QpdfOutline[];
}

/** The outline and page labels as qpdf reads them (`qpdf --json`). */
export const qpdfJson = (
  pdf: Uint8Array,
): { outlines: QpdfOutline[]; pagelabels: Array<{ index: number; label: { '/P'?: string; '/S'?: string } }> } =>
  withFile(pdf, (f) => JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=outlines', '--json-key=pagelabels', f], { encoding: 'utf8' })));

/** Encrypts with qpdf (AES-256, a user password). */
export const encryptWithQpdf = (pdf: Uint8Array): Uint8Array =>
  withFile(pdf, (f) => {
    const out = `${f}.enc.pdf`;
    execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', f, out]);
    return new Uint8Array(fs.readFileSync(out));
  });

/** The page objects and every object as qpdf reads them (`qpdf --json=2`: pages and objects). */
export const qpdfObjects = (pdf: Uint8Array): { pages: string[]; objects: Record<string, { value?: Record<string, unknown> }> } =>
  withFile(pdf, (f) => {
    const json = JSON.parse(
      execFileSync('qpdf', ['--json=2', '--json-key=pages', '--json-key=qpdf', f], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }),
    );
    return { pages: (json.pages as Array<{ object: string }>).map((p) => p.object), objects: json.qpdf[1] };
  });

/** Two pages; page 1 carries a link annotation to page 2. */
export async function linkedPdf(tag: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = [doc.addPage([595.28, 841.89]), doc.addPage([595.28, 841.89])];
  pages.forEach((p, i) => p.drawText(`${tag} page ${i + 1}`, { x: 40, y: 780, size: 14, font }));
  const link = doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [40, 700, 200, 720], Border: [0, 0, 0], Dest: [pages[1]!.ref, 'Fit'] });
  pages[0]!.node.set(PDFName.of('Annots'), doc.context.obj([doc.context.register(link)]));
  return doc.save({ useObjectStreams: false });
}
