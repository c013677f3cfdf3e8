/**
 * Helpers for the sign tests: build input PDFs, call /v1/sign, and check outputs with tools nobody here
 * wrote (poppler's pdfsig with an NSS database, qpdf, OpenSSL, pdftotext).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { authed, type TestApi } from '../helpers/api.js';
import type { SigningIdentity } from '../../src/services.js';
import { signDocument, signInputKind } from '../../src/sign/index.js';

export const sha256 = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function makePdf(pages: number, opts: { objectStreams?: boolean; size?: [number, number]; text?: string } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage(opts.size ?? [595.28, 841.89]);
    page.drawText(`${opts.text ?? 'Contract page'} ${i + 1}`, { x: 40, y: page.getHeight() - 60, size: 14, font });
  }
  return doc.save({ useObjectStreams: opts.objectStreams ?? false });
}

/**
 * signDocument (no HTTP) with a minimal request and no audit pages, as the bounds tests of both engines use
 * it: the document sniffed first, as the route does (a non-PDF is refused there, not by the engine).
 */
export async function signMinimal(identity: SigningIdentity, document: Uint8Array): ReturnType<typeof signDocument> {
  signInputKind(document);
  return signDocument(
    {
      document,
      signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
      auditTrail: [{ type: 'document.signed', timestamp: new Date('2026-11-20T09:15:00Z') }],
      auditPages: false,
      level: { level: 'B-B', asked: false },
    },
    { identity },
  );
}

export interface SignBody {
  document?: { base64?: string; url?: string };
  signer?: Record<string, unknown>;
  auditTrail?: unknown[];
  [k: string]: unknown;
}

export function signBody(pdf: Uint8Array, extra: Partial<SignBody> = {}): SignBody {
  return {
    document: { base64: Buffer.from(pdf).toString('base64') },
    signer: { name: 'Ada Lovelace', email: 'ada@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
    auditTrail: [
      { type: 'document.viewed', timestamp: '2026-11-20T09:15:00Z', data: { page: 1 } },
      { type: 'document.signed', timestamp: '2026-11-20T09:16:30.250+01:00' },
    ],
    eventId: 'evt-42',
    ...extra,
  };
}

export async function postSign(t: TestApi, body: unknown): Promise<{ status: number; json: any; pdf?: Uint8Array }> {
  const res = await fetch(
    `${t.url}/v1/sign`,
    authed(t, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  );
  const json = await res.json();
  const pdf = res.status === 200 ? new Uint8Array(Buffer.from(json.document.base64, 'base64')) : undefined;
  return { status: res.status, json, pdf };
}

/**
 * An NSS database that trusts `rootPem` as a CA, for `pdfsig -nssdir`. pdfsig validates for the S/MIME
 * (e-mail signer) usage, so the trust flags must include it: "C,," alone reports "issuer isn't Trusted".
 */
export function nssDbTrusting(rootPem: string): string {
  const dir = tmpDir('folio-nss-');
  execFileSync('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password']);
  fs.writeFileSync(path.join(dir, 'root.pem'), rootPem);
  execFileSync('certutil', ['-A', '-n', 'folio-root', '-t', 'C,C,C', '-i', path.join(dir, 'root.pem'), '-d', `sql:${dir}`]);
  return dir;
}

export function writeTemp(dir: string, name: string, bytes: Uint8Array | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

export function pdfsig(file: string, nssDir?: string): string {
  const args = nssDir ? ['-nssdir', `sql:${nssDir}`, file] : ['-nocert', file];
  const r = spawnSync('pdfsig', args, { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
}

/** Splits pdfsig output into one block per signature. */
export function pdfsigBlocks(output: string): string[] {
  return output.split(/^Signature #\d+:$/m).slice(1);
}

export function qpdfCheck(file: string): { status: number; output: string } {
  const r = spawnSync('qpdf', ['--check', file], { encoding: 'utf8' });
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

export function pageCount(file: string): number {
  return Number(execFileSync('qpdf', ['--show-npages', file], { encoding: 'utf8' }).trim());
}

export function pdftotext(file: string, first?: number, last?: number): string {
  const args = [...(first ? ['-f', String(first)] : []), ...(last ? ['-l', String(last)] : []), '-layout', file, '-'];
  return execFileSync('pdftotext', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The embedded audit-trail.json, read by qpdf. */
export function auditAttachment(file: string): any {
  const list = execFileSync('qpdf', ['--list-attachments', file], { encoding: 'utf8' });
  if (!list.includes('audit-trail.json')) throw new Error(`no audit-trail.json attachment: ${list}`);
  return JSON.parse(execFileSync('qpdf', ['--show-attachment=audit-trail.json', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

export interface SignatureParts {
  byteRange: number[];
  cms: Buffer;
  signedBytes: Buffer;
}

/** The last signature's ByteRange, CMS and signed bytes, found by scanning the file text. */
export function lastSignature(pdf: Uint8Array): SignatureParts {
  const text = Buffer.from(pdf).toString('latin1');
  const matches = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  const m = matches[matches.length - 1]!;
  const byteRange = m.slice(1, 5).map(Number);
  const [a, b, c, d] = byteRange as [number, number, number, number];
  const hex = text.slice(b + 1, c - 1);
  // The placeholder is zero-padded; cut at the DER length (stripping trailing zeros would also eat a signature
  // whose last byte is 0x00, about one in 256).
  const cms = derPrefix(Buffer.from(hex, 'hex'));
  const signedBytes = Buffer.concat([Buffer.from(pdf.subarray(a, a + b)), Buffer.from(pdf.subarray(c, c + d))]);
  return { byteRange, cms, signedBytes };
}

/** `openssl cms -verify` of a detached CMS against `rootPem`; returns OpenSSL's output and status. */
export function opensslCmsVerify(dir: string, parts: SignatureParts, rootPem: string): { status: number; output: string } {
  const cms = writeTemp(dir, `sig-${crypto.randomBytes(4).toString('hex')}.der`, parts.cms);
  const content = writeTemp(dir, `content-${crypto.randomBytes(4).toString('hex')}.bin`, parts.signedBytes);
  const ca = writeTemp(dir, 'ca.pem', rootPem);
  const r = spawnSync(
    'openssl',
    ['cms', '-verify', '-binary', '-inform', 'DER', '-in', cms, '-content', content, '-CAfile', ca, '-purpose', 'any', '-out', '/dev/null'],
    { encoding: 'utf8' },
  );
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

export function opensslCmsPrint(dir: string, cms: Buffer): string {
  const file = writeTemp(dir, `print-${crypto.randomBytes(4).toString('hex')}.der`, cms);
  return execFileSync('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', file], { encoding: 'utf8' });
}

/** The DER element at the start of `padded` (a SEQUENCE with a definite length), without the padding after it. */
function derPrefix(padded: Buffer): Buffer {
  const first = padded[1]!;
  if (first < 0x80) return padded.subarray(0, 2 + first);
  const lengthBytes = first & 0x7f;
  let length = 0;
  for (let i = 0; i < lengthBytes; i++) length = length * 256 + padded[2 + i]!;
  return padded.subarray(0, 2 + lengthBytes + length);
}
