/**
 * Helpers for the PAdES B-LT/B-LTA tests. The API runs in the test process on a port chosen before it
 * starts, so that PUBLIC_URL (and with it the CRL and OCSP URLs in the generated signing certificate) point
 * at it; the tools that may fetch from it (pdfsig through NSS, `openssl ocsp -url`) therefore run as
 * asynchronous child processes, never spawnSync, which would block the server they talk to.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/modules/config.js';
import { buildApi } from '../../src/api.js';
import { isRef, isStream, openPdf, type PdfDocument } from '../../src/pdf/index.js';
import type { TestApi } from '../helpers/api.js';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The real API with PUBLIC_URL = its own address. */
export async function startApiAtPublicUrl(env: Record<string, string> = {}): Promise<TestApi> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-ltv-'));
  const port = await freePort();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    OFFICE_WORKERS: '1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...env,
  });
  const api = await buildApi({ config, logger: pino({ level: 'silent' }), withoutOffice: true });
  await api.app.listen({ host: '127.0.0.1', port });
  const issued = await api.services.auth.issueKey('ltv@example.com');
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: issued.apiKey,
    keyId: issued.keyId,
    services: api.services,
    api,
    dataDir,
    async close() {
      await api.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function run(cmd: string, args: string[], input?: Uint8Array): Promise<{ status: number; output: string; stdout: Buffer }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const status = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ status, output: `${stdout.toString('utf8')}${stderr.toString('utf8')}`, stdout });
    });
    if (input) child.stdin!.end(Buffer.from(input));
  });
}

/** pdfsig against an NSS database (online OCSP allowed: it may ask the API's responder). */
export async function pdfsigAsync(file: string, nssDir: string): Promise<string> {
  return (await run('pdfsig', ['-nssdir', `sql:${nssDir}`, file])).output;
}

export interface DssView {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
  vri: Map<string, { certs: number; ocsps: number; crls: number }>;
}

function streams(doc: PdfDocument, value: unknown): Uint8Array[] {
  const arr = doc.deref(value as never, doc.last);
  if (!Array.isArray(arr)) return [];
  return arr.filter(isRef).map((r) => {
    const v = doc.resolve(r.num, doc.last)?.value;
    if (!isStream(v)) throw new Error(`DSS entry ${r.num} is not a stream`);
    return doc.decode(v);
  });
}

/** The catalog's /DSS as of the last revision, read with Folio's forensic reader. */
export function readDss(pdf: Uint8Array): DssView | undefined {
  const doc = openPdf(pdf);
  const dss = doc.dictAt(doc.catalogAt(doc.last)?.map.get('DSS'), doc.last);
  if (!dss) return undefined;
  const vri = new Map<string, { certs: number; ocsps: number; crls: number }>();
  const vriDict = doc.dictAt(dss.map.get('VRI'), doc.last);
  for (const [key, value] of vriDict?.map ?? []) {
    const entry = doc.dictAt(value, doc.last);
    const count = (k: string) => {
      const a = doc.deref(entry?.map.get(k), doc.last);
      return Array.isArray(a) ? a.length : 0;
    };
    vri.set(key, { certs: count('Cert'), ocsps: count('OCSP'), crls: count('CRL') });
  }
  return { certs: streams(doc, dss.map.get('Certs')), ocsps: streams(doc, dss.map.get('OCSPs')), crls: streams(doc, dss.map.get('CRLs')), vri };
}

/** Every signature's /Contents (the whole placeholder) in file order, from the /ByteRange gaps. */
export function signatureContents(pdf: Uint8Array): Buffer[] {
  const text = Buffer.from(pdf).toString('latin1');
  return [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].map((m) => {
    const b = Number(m[2]);
    const c = Number(m[3]);
    return Buffer.from(text.slice(b + 1, c - 1), 'hex');
  });
}
