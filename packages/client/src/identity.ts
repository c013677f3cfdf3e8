/**
 * Document identity (docs/api.md § Client library). Rule 1: a GUID (`w15:docId`, braces removed, else the `DocumentGuid`
 * custom property) and a creation time (`dcterms:created`) both present → lowercase hex SHA-256 of
 * `GUID|created`, which survives edits. Rule 2: otherwise → SHA-256 of the file bytes. SHA-256 rather than
 * SuperDoc's CRC32: 32 bits collide around 65,000 documents per key, which would undercount a bill.
 */
import { FolioClientError } from './errors.js';

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) {
    throw new FolioClientError(
      'UNSUPPORTED_ENVIRONMENT',
      'WebCrypto (crypto.subtle) is unavailable: browsers provide it only on secure origins (https or localhost)',
    );
  }
  return s;
}

export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(await subtle().digest('SHA-256', bytes as BufferSource));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

export type IdentityRule = 'metadata' | 'content';

export async function documentIdOf(
  guid: string | null,
  createdAt: string | null,
  bytes: Uint8Array,
): Promise<{ documentId: string; rule: IdentityRule }> {
  if (guid && createdAt) return { documentId: await sha256Hex(`${guid}|${createdAt}`), rule: 'metadata' };
  return { documentId: await sha256Hex(bytes), rule: 'content' };
}

/** A random (version 4) UUID; falls back to getRandomValues where randomUUID is missing (insecure origins). */
export function newGuid(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') {
    try {
      return c.randomUUID();
    } catch {
      // randomUUID throws on insecure origins in some browsers; getRandomValues does not.
    }
  }
  if (typeof c?.getRandomValues !== 'function') {
    throw new FolioClientError('UNSUPPORTED_ENVIRONMENT', 'crypto.getRandomValues is unavailable');
  }
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Now, in UTC, as W3CDTF to the second (how Word writes dcterms:created). */
export function nowW3cdtf(now = new Date()): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
