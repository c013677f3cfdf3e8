/**
 * Online revocation data, off by default: when the document carries no usable CRL/OCSP for a signer, the
 * certificate's CRL distribution points and OCSP responder (AIA) are asked — but only hosts whose exact
 * `host:port` is on URL_FETCH_ALLOWLIST (an operator's own CA, an intranet responder), never anything else,
 * through SafeFetcher (no redirects, bounded size and time). A validator that phones out to URLs named by a
 * document would let any document make the server issue requests and leak when it is verified.
 */
import crypto, { type X509Certificate } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { CertID, OCSPRequest, Request, TBSRequest } from '@peculiar/asn1-ocsp';
import { SafeFetcher } from '../fetch/safe-fetch.js';
import { certificateFields, spkiKeyBits } from '../crypto/der.js';
import { verifyPdf, type VerifyOptions, type VerifyResult } from './verify.js';
import { MAX_CRL_BYTES, type RevocationItem } from './revocation.js';

export interface RevocationFetchOptions {
  /** URL_FETCH_ALLOWLIST: `host:port` entries; empty means never fetch. */
  allowlist: string[];
  /** Per request (default 5 s) and for all requests of one document (default 10 s). */
  timeoutMs?: number;
  totalMs?: number;
  /** Requests per document (default 4). */
  maxRequests?: number;
}

export class RevocationFetcher {
  private readonly allow: Set<string>;
  private readonly fetcher: SafeFetcher;
  readonly totalMs: number;
  readonly maxRequests: number;

  constructor(o: RevocationFetchOptions) {
    this.allow = new Set(o.allowlist.map((s) => s.toLowerCase()));
    this.fetcher = new SafeFetcher({ allowlist: o.allowlist, maxBytes: MAX_CRL_BYTES, timeoutMs: o.timeoutMs ?? 5000, maxRedirects: 0 });
    this.totalMs = o.totalMs ?? 10_000;
    this.maxRequests = o.maxRequests ?? 4;
  }

  get enabled(): boolean {
    return this.allow.size > 0;
  }

  /** Only http(s) URLs whose exact host:port is allow-listed. */
  allowed(raw: string): boolean {
    try {
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
      const port = u.port || (u.protocol === 'https:' ? '443' : '80');
      return this.allow.has(`${u.hostname.toLowerCase()}:${port}`);
    } catch {
      return false;
    }
  }

  /** The body, or undefined on any failure (a revocation source that cannot be reached is just absent). */
  async get(url: string): Promise<Uint8Array | undefined> {
    if (!this.allowed(url)) return undefined;
    try {
      return (await this.fetcher.fetch(url, 'revocation URL')).bytes;
    } catch {
      return undefined;
    }
  }

  close(): Promise<void> {
    return this.fetcher.close();
  }
}

/** An OCSP GET URL (RFC 6960 appendix A.1) asking about `cert` issued by `issuer` (CertID with SHA-1). */
export function ocspGetUrl(base: string, cert: X509Certificate, issuer: X509Certificate): string | undefined {
  const fields = certificateFields(new Uint8Array(cert.raw));
  const keyBits = spkiKeyBits(new Uint8Array(issuer.publicKey.export({ type: 'spki', format: 'der' })));
  if (!fields || !keyBits) return undefined;
  const sha1 = (b: Uint8Array) => {
    const d = crypto.createHash('sha1').update(b).digest();
    return d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength) as ArrayBuffer;
  };
  const serial = fields.serial;
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: '1.3.14.3.2.26', parameters: null }),
    issuerNameHash: new OctetString(sha1(fields.issuer)),
    issuerKeyHash: new OctetString(sha1(keyBits)),
    serialNumber: serial.buffer.slice(serial.byteOffset, serial.byteOffset + serial.byteLength) as ArrayBuffer,
  });
  const req = new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certId })] }) });
  const b64 = Buffer.from(AsnConvert.serialize(req)).toString('base64');
  return `${base.replace(/\/$/, '')}/${encodeURIComponent(b64)}`;
}

/**
 * verifyPdf, then — only with a fetcher whose allow-list is not empty, and only for signers the document
 * gives no usable revocation data for — the allow-listed CRL/OCSP URLs of their certificates, and verifyPdf
 * again with what came back (origin ONLINE). Without a fetcher this is verifyPdf.
 */
export async function verifyPdfWithRevocation(bytes: Uint8Array, options: VerifyOptions, fetcher?: RevocationFetcher): Promise<VerifyResult> {
  if (!fetcher?.enabled) return verifyPdf(bytes, options);
  const candidates: NonNullable<VerifyOptions['onlineCandidates']> = [];
  const first = verifyPdf(bytes, { ...options, onlineCandidates: candidates });
  const deadline = Date.now() + fetcher.totalMs;
  let requests = 0;
  const online = new Map<string, RevocationItem[]>();
  for (const c of candidates) {
    const items: RevocationItem[] = [];
    const urls: Array<{ type: 'CRL' | 'OCSP'; url: string }> = [
      ...c.ocsp.flatMap((u) => {
        const url = c.issuer ? ocspGetUrl(u, c.cert, c.issuer) : undefined;
        return url && fetcher.allowed(u) ? [{ type: 'OCSP' as const, url }] : [];
      }),
      ...c.crl.filter((u) => fetcher.allowed(u)).map((url) => ({ type: 'CRL' as const, url })),
    ];
    for (const { type, url } of urls) {
      if (requests >= fetcher.maxRequests || Date.now() >= deadline) break;
      requests++;
      const body = await fetcher.get(url);
      if (body) items.push({ type, origin: 'ONLINE', der: body });
    }
    if (items.length) online.set(c.fingerprint, items);
  }
  return online.size ? verifyPdf(bytes, { ...options, online }) : first;
}
