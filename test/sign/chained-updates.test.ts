/**
 * B-LT/B-LTA chain their updates to what the update before wrote (src/pdf/xref-chain.ts) instead of reading
 * the output back (issue 26). Held here against the way it was done before: for a classic xref table, an
 * xref stream, and a document already carrying another producer's DSS, the DSS update and the document-
 * timestamp update appended through the chain are byte for byte those appended after a full read of the
 * output (random /ID halves made equal), and the section each chains to is the one the reader finds.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import pino from 'pino';
import { PDFDocument, PDFName, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity } from '../../src/sign/index.js';
import { preparePdf, sealPdf } from '../../src/sign/sign-pdf.js';
import {
  AUDIT_TRAIL_FORMAT,
  PdfDocument,
  appendDocTimestampPlaceholder,
  appendDss,
  dssUpdate,
  lastXrefOf,
  type AuditRecord,
  type DssContent,
} from '../../src/pdf/index.js';
import { makePdf, tmpDir } from './helpers.js';

let work: string;
let identity: SigningIdentity;

beforeAll(async () => {
  work = tmpDir('folio-chain-');
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: work }), pino({ level: 'silent' }));
  // Every /ID second half the writers draw is the same, so two ways of writing can be compared byte for byte.
  vi.spyOn(crypto, 'randomBytes').mockImplementation(((n: number) => Buffer.alloc(n, 0x5a)) as typeof crypto.randomBytes);
}, 60_000);
afterAll(() => {
  vi.restoreAllMocks();
  fs.rmSync(work, { recursive: true, force: true });
});

async function withForeignDss(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([595, 842]).drawText('DSS', { x: 40, y: 780, size: 14, font });
  const cert = doc.context.register(doc.context.stream(identity.chainDer[0]!));
  doc.catalog.set(PDFName.of('DSS'), doc.context.obj({ Type: 'DSS', Certs: [cert] }));
  return doc.save({ useObjectStreams: false });
}

async function sealed(pdf: Uint8Array) {
  const prepared = await preparePdf(pdf);
  const sha = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');
  const record: AuditRecord = {
    format: AUDIT_TRAIL_FORMAT,
    documentSha256: sha(pdf),
    documentType: 'pdf',
    pdfSha256: sha(prepared.base),
    pdfLength: prepared.base.length,
    signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    signedAt: '2026-11-20T10:00:00.000Z',
    certificate: { subject: 'test', fingerprint: 'test' },
    auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T09:00:00.000Z' }],
  };
  return sealPdf(prepared, record, 'test', { identity, auditPages: true, tsaOptional: true });
}

const content = (): DssContent => {
  const data = { certs: identity.chainDer, ocsps: [new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x07])], crls: [] };
  return { ...data, vri: [{ key: 'A'.repeat(40), data }] };
};

describe('updates chained to the one before are those appended after reading it back', () => {
  const inputs: Record<string, () => Promise<Uint8Array>> = {
    'a classic xref table': () => makePdf(3),
    'an xref stream with object streams': () => makePdf(3, { objectStreams: true }),
    "another producer's DSS (carried on, its certificate not added twice)": withForeignDss,
  };
  for (const [name, input] of Object.entries(inputs)) {
    it(name, async () => {
      const signature = await sealed(await input());
      const chained = dssUpdate(signature.chain(), content());
      const reread = appendDss(signature.pdf, content());
      expect(Buffer.from(chained.bytes).equals(Buffer.from(reread))).toBe(true);
      expect(lastXrefOf(new PdfDocument(chained.bytes))).toEqual(chained.next.last);

      const stamped = appendDocTimestampPlaceholder(chained.next, 4096);
      const stampedReread = appendDocTimestampPlaceholder(reread, 4096);
      expect(Buffer.from(stamped.bytes).equals(Buffer.from(stampedReread.bytes))).toBe(true);
      expect(stamped.byteRange).toEqual(stampedReread.byteRange);
    });
  }

  it('the signature update itself chains to the section the reader finds in the signed file', async () => {
    for (const objectStreams of [false, true]) {
      const signature = await sealed(await makePdf(2, { objectStreams }));
      expect(lastXrefOf(new PdfDocument(signature.pdf))).toEqual(signature.chain().last);
    }
  });
});
