/**
 * How much work one signature costs the engine, per PAdES level (issue 26: "one check and one copy"):
 * whole-document parses by the bounded reader (`new PdfDocument`), pdf-lib documents created and saved,
 * incremental updates appended (each one a copy of the whole document: original bytes + update), latin1
 * strings of the whole file, bytes copied out of the document, and sniffs of the input. Counted with spies around the real modules, so a
 * change that parses or copies the document again fails here.
 */
import fs from 'node:fs';
import pino from 'pino';
import { PDFContext, PDFDocument } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity, signDocument } from '../../src/sign/index.js';
import { makePdf, tmpDir } from './helpers.js';
import { startTestTsa, type TestTsa } from './tsa-server.js';

const counts = { readers: 0, updates: 0, sniffs: 0 };

vi.mock('../../src/pdf/reader.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/pdf/reader.js')>();
  class CountedPdfDocument extends actual.PdfDocument {
    constructor(buf: Uint8Array) {
      super(buf);
      counts.readers++;
    }
  }
  return { ...actual, PdfDocument: CountedPdfDocument };
});
vi.mock('../../src/pdf/incremental.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/pdf/incremental.js')>();
  return {
    ...actual,
    appendIncrementalUpdate: (...args: Parameters<typeof actual.appendIncrementalUpdate>) => {
      counts.updates++;
      return actual.appendIncrementalUpdate(...args);
    },
  };
});
vi.mock('../../src/formats/sniff.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/formats/sniff.js')>();
  const counted =
    <A extends unknown[], R>(f: (...a: A) => R) =>
    (...a: A): R => {
      counts.sniffs++;
      return f(...a);
    };
  return { ...actual, sniff: counted(actual.sniff), isPdf: counted(actual.isPdf), isZip: counted(actual.isZip) };
});
let work: string;
let identity: SigningIdentity;
let tsa: TestTsa;
let pdf: Uint8Array;

beforeAll(async () => {
  work = tmpDir('folio-work-count-');
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: work }), pino({ level: 'silent' }));
  tsa = await startTestTsa(work);
  // Large enough that no string but one of the whole document reaches its length (the /Contents hex does not).
  pdf = await makePdf(300);
}, 60_000);
afterAll(async () => {
  await tsa?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

type Level = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

async function measure(level: Level) {
  counts.readers = counts.updates = counts.sniffs = 0;
  const contexts = vi.spyOn(PDFContext, 'create');
  const saves = vi.spyOn(PDFDocument.prototype, 'save');
  // A latin1 string of the whole document (the reader's `text`): a copy of every byte as a string.
  const wholeStrings = { n: 0 };
  const toString = Buffer.prototype.toString;
  const spy = vi.spyOn(Buffer.prototype, 'toString').mockImplementation(function (this: Buffer, ...a: unknown[]) {
    const [encoding, start = 0, end = this.length] = a as [string?, number?, number?];
    if (encoding === 'latin1' && Math.min(end, this.length) - start >= pdf.length) wholeStrings.n++;
    return toString.apply(this, a as Parameters<typeof toString>);
  });
  // Bytes sliced (copied) out of a buffer at least as large as the document: pdf-lib's copies of its streams.
  const sliced = { bytes: 0 };
  const slice = Uint8Array.prototype.slice;
  const sliceSpy = vi.spyOn(Uint8Array.prototype, 'slice').mockImplementation(function (this: Uint8Array, ...a: [number?, number?]) {
    const out = slice.apply(this, a);
    if (this.length >= pdf.length) sliced.bytes += out.length;
    return out;
  });
  try {
    const result = await signDocument(
      {
        document: pdf,
        signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
        auditTrail: [{ type: 'document.signed', timestamp: new Date('2026-11-20T09:15:00Z') }],
        level: { level, asked: true },
      },
      { identity, tsaUrl: tsa.url },
    );
    expect(result.level).toBe(level);
    return {
      readers: counts.readers,
      pdfLibDocuments: contexts.mock.calls.length,
      pdfLibSaves: saves.mock.calls.length,
      updates: counts.updates,
      wholeStrings: wholeStrings.n,
      copiedFromDocument: sliced.bytes,
      sniffs: counts.sniffs,
    };
  } finally {
    contexts.mockRestore();
    saves.mockRestore();
    spy.mockRestore();
    sliceSpy.mockRestore();
  }
}

/**
 * Before issue 26 (same spies): the reader ran once per update — B-LT twice, B-LTA three times — each time
 * with a latin1 string of the whole file for the writer's xref check; pdf-lib's streams were copies of the
 * input's (33 KB of this 132 KB file, nearly all of a scanned one); and the engine sniffed the input (twice:
 * isPdf and the '%PDF-' test, after the route's isZip).
 */
const EXPECTED: Record<Level, Awaited<ReturnType<typeof measure>>> = {
  'B-B': { readers: 1, pdfLibDocuments: 1, pdfLibSaves: 0, updates: 1, wholeStrings: 0, copiedFromDocument: 0, sniffs: 0 },
  'B-T': { readers: 1, pdfLibDocuments: 1, pdfLibSaves: 0, updates: 1, wholeStrings: 0, copiedFromDocument: 0, sniffs: 0 },
  'B-LT': { readers: 1, pdfLibDocuments: 1, pdfLibSaves: 0, updates: 2, wholeStrings: 0, copiedFromDocument: 0, sniffs: 0 },
  'B-LTA': { readers: 1, pdfLibDocuments: 1, pdfLibSaves: 0, updates: 3, wholeStrings: 0, copiedFromDocument: 0, sniffs: 0 },
};

describe('work per signature: the input read once, each update appended without reading the output back', () => {
  for (const level of ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const) {
    it(level, async () => {
      expect(await measure(level)).toEqual(EXPECTED[level]);
    });
  }
});
