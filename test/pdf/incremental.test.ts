/**
 * The shared incremental writer (src/pdf/incremental.ts) over the forensic reader: appending to a classic
 * xref table, to an xref stream (qpdf's object streams), to a file that already has an incremental update,
 * and refusing hostile trailers. Every output is read back by the reader and checked by `qpdf --check`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import {
  MAX_OBJECT_NUMBER,
  PdfDocument,
  appendIncrementalUpdate,
  isDict,
  isName,
  lastXrefOf,
  readLastXref,
  scanObjects,
  serialize,
  type LastXref,
} from '../../src/pdf/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-pdf-incremental-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let fileCount = 0;
function qpdf(args: string[], bytes: Uint8Array): { status: number; output: string; file: string } {
  const file = path.join(tmp, `in-${fileCount++}.pdf`);
  fs.writeFileSync(file, bytes);
  const r = spawnSync('qpdf', [...args, file], { encoding: 'utf8' });
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}`, file };
}

/** A two-page PDF with a classic xref table, made by pdf-lib (not by the code under test). */
async function classicPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([300, 400]);
  doc.addPage([300, 400]);
  doc.setTitle('incremental writer test');
  return doc.save({ useObjectStreams: false });
}

/** The same document rewritten by qpdf with object streams and a cross-reference stream. */
function withXrefStream(pdf: Uint8Array): Uint8Array {
  const src = path.join(tmp, `src-${fileCount++}.pdf`);
  const out = path.join(tmp, `objstm-${fileCount++}.pdf`);
  fs.writeFileSync(src, pdf);
  const r = spawnSync('qpdf', ['--object-streams=generate', src, out], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return new Uint8Array(fs.readFileSync(out));
}

/**
 * Appends a new object and a rewritten catalog (pointing at the new object) through the writer, then checks
 * the result with the reader and with qpdf.
 */
function appendAndCheck(original: Uint8Array, expectedKind: LastXref['kind']): Uint8Array {
  const before = new PdfDocument(original);
  const last = lastXrefOf(before)!;
  expect(last).toBeDefined();
  expect(last.kind).toBe(expectedKind);
  expect(last.entriesValid).toBe(true);
  const rootRef = last.root!;
  const catalog = before.catalogAt(before.last)!;
  const extra = last.size;
  const map = new Map(catalog.map);
  map.set('FolioTest', { kind: 'ref', num: extra, gen: 0 });
  const objects = [
    {
      objectNumber: rootRef.num,
      generation: rootRef.gen,
      bytes: Buffer.from(`${rootRef.num} ${rootRef.gen} obj\n${serialize({ ...catalog, map })}\nendobj\n`, 'latin1'),
    },
    { objectNumber: extra, generation: 0, bytes: Buffer.from(`${extra} 0 obj\n<< /Written (by the incremental writer) >>\nendobj\n`, 'latin1') },
  ];
  const size = extra + 1 + (last.kind === 'stream' ? 1 : 0);
  const { bytes, offsets } = appendIncrementalUpdate(
    original,
    last,
    objects,
    { root: `${rootRef.num} ${rootRef.gen} R`, id: [last.firstId ?? 'aa', 'bb'] },
    size,
  );

  expect(Buffer.from(bytes.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
  const after = new PdfDocument(bytes);
  expect(after.revisions.length).toBe(before.revisions.length + 1);
  const rev = after.revisions[after.last]!;
  expect(rev.xref).toBe(expectedKind === 'stream' ? 'stream' : 'table');
  expect(rev.repaired).toBe(false);
  expect(after.anomalies.filter((a) => a.revision === after.last)).toEqual([]);
  expect(rev.entries.get(extra)).toMatchObject({ type: 1, offset: offsets.get(extra) });
  const cat = after.catalogAt(after.last)!;
  expect(after.dictAt(cat.map.get('FolioTest'), after.last)?.map.has('Written')).toBe(true);
  // Earlier revisions read as before the update.
  expect(isName(after.catalogAt(before.last)?.map.get('Type'), 'Catalog')).toBe(true);
  expect(serialize(after.catalogAt(before.last)!)).toBe(serialize(catalog));
  // The writer chains its own output too.
  expect(lastXrefOf(after)).toMatchObject({ offset: rev.startxref, size, entriesValid: true });

  const check = qpdf(['--check'], bytes);
  expect(check.status, check.output).toBe(0);
  expect(check.output).toMatch(/No syntax or stream encoding errors found/);
  return bytes;
}

describe('incremental writer', () => {
  it('appends a classic xref table to a classic-table PDF', async () => {
    const out = appendAndCheck(await classicPdf(), 'table');
    expect(Buffer.from(out).toString('latin1')).toMatch(
      /trailer\n<< \/Size \d+ \/Root \d+ 0 R \/ID \[<[0-9a-f]+> <bb>\] \/Prev \d+ >>\nstartxref\n\d+\n%%EOF\n$/,
    );
  });

  it('appends an xref stream to a PDF whose last section is an xref stream (qpdf object streams)', async () => {
    const original = withXrefStream(await classicPdf());
    expect(new PdfDocument(original).revisions.at(-1)!.xref).toBe('stream');
    const out = appendAndCheck(original, 'stream');
    const doc = new PdfDocument(out);
    // Objects still inside the object streams resolve through the chain.
    expect(isDict(doc.dictAt(doc.catalogAt(doc.last)!.map.get('Pages'), doc.last))).toBe(true);
  });

  it('appends to a PDF that already has incremental updates, of either kind', async () => {
    const once = appendAndCheck(await classicPdf(), 'table');
    const twice = appendAndCheck(once, 'table');
    expect(new PdfDocument(twice).revisions.length).toBe(3);
    const streamed = appendAndCheck(withXrefStream(await classicPdf()), 'stream');
    expect(new PdfDocument(appendAndCheck(streamed, 'stream')).revisions.length).toBe(3);
  });

  it('reports shifted table entries, so that the caller repairs before appending', async () => {
    const pdf = Buffer.from(await classicPdf()).toString('latin1');
    const at = pdf.lastIndexOf('startxref');
    const xrefAt = Number(/startxref\s+(\d+)/.exec(pdf.slice(at))![1]);
    // Shift every object by a three-byte comment line: the table now points into the comment.
    const headerEnd = pdf.indexOf('\n', pdf.indexOf('\n') + 1) + 1;
    const shifted = `${pdf.slice(0, headerEnd)}%x\n${pdf.slice(headerEnd, at)}startxref\n${xrefAt + 3}\n%%EOF\n`;
    const last = readLastXref(Buffer.from(shifted, 'latin1'));
    expect(last).toMatchObject({ kind: 'table', entriesValid: false });
  });

  it('rebuilds a complete table from the reader’s object bodies when the xref is unusable', async () => {
    const pdf = Buffer.from(await classicPdf()).toString('latin1');
    const broken = Buffer.from(pdf.replace(/startxref\s+\d+/, 'startxref\n7'), 'latin1');
    const doc = new PdfDocument(broken);
    expect(lastXrefOf(doc)).toBeUndefined();
    const last = scanObjects(doc)!;
    expect(last.kind).toBe('rebuilt');
    expect(last.scanned!.size).toBeGreaterThan(3);
    const rootRef = last.root!;
    const { bytes } = appendIncrementalUpdate(
      broken,
      last,
      [{ objectNumber: last.size, generation: 0, bytes: Buffer.from(`${last.size} 0 obj\n<< >>\nendobj\n`) }],
      { root: `${rootRef.num} ${rootRef.gen} R` },
      last.size + 1,
    );
    const check = qpdf(['--check'], bytes);
    expect(check.status, check.output).toBe(0);
    const after = new PdfDocument(bytes);
    expect(after.revisions.at(-1)!.xref).toBe('table');
    expect(isName(after.catalogAt(after.last)?.map.get('Type'), 'Catalog')).toBe(true);
  });
});

describe('incremental writer on hostile input', () => {
  /** One catalog and page tree, with the trailer text given. */
  const minimal = (trailer: (xrefAt: number) => string) => {
    let pdf = '%PDF-1.7\n';
    const offsets: number[] = [];
    for (const body of ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>']) {
      offsets.push(pdf.length);
      pdf += `${offsets.length} 0 obj\n${body}\nendobj\n`;
    }
    const xrefAt = pdf.length;
    pdf += `xref\n0 3\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    pdf += `trailer\n${trailer(xrefAt)}\nstartxref\n${xrefAt}\n%%EOF\n`;
    return Buffer.from(pdf, 'latin1');
  };

  it('a trailer /Size of 10^12 is UNPROCESSABLE_DOCUMENT', () => {
    const bytes = minimal(() => '<< /Size 1000000000000 /Root 1 0 R >>');
    let err: unknown;
    try {
      readLastXref(bytes);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FolioError);
    expect(err).toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    expect((err as Error).message).toMatch(new RegExp(`/Size 1000000000000, beyond the PDF limit of ${MAX_OBJECT_NUMBER + 1}`));
  });

  it('a /Prev that points at its own section is not chained to (the caller repairs)', () => {
    const bytes = minimal((xrefAt) => `<< /Size 3 /Root 1 0 R /Prev ${xrefAt} >>`);
    const doc = new PdfDocument(bytes);
    expect(doc.revisions[0]!.prevCycle).toBe(true);
    expect(lastXrefOf(doc)).toBeUndefined();
    expect(lastXrefOf(new PdfDocument(minimal(() => '<< /Size 3 /Root 1 0 R >>')))).toMatchObject({ kind: 'table', size: 3 });
  });

  it('an encrypted document (trailer /Encrypt) is UNPROCESSABLE_DOCUMENT, chained or rebuilt', () => {
    const doc = new PdfDocument(minimal(() => '<< /Size 3 /Root 1 0 R /Encrypt << /Filter /Standard >> >>'));
    expect(() => lastXrefOf(doc)).toThrow(/encrypted/);
    expect(() => scanObjects(doc)).toThrow(FolioError);
  });

  it('more revisions than the reader reads is UNPROCESSABLE_DOCUMENT', () => {
    const one = minimal(() => '<< /Size 3 /Root 1 0 R >>').toString('latin1');
    const tail = one.slice(one.indexOf('xref'));
    const bytes = Buffer.from(one + tail.repeat(1001), 'latin1');
    expect(() => readLastXref(bytes)).toThrow(FolioError);
  });
});
