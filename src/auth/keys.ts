/**
 * API key format (docs/api.md § Common rules): `folio_sk_` + 32 base62 characters of randomness + 6 base62 characters of
 * the CRC32 of the random part. The checksum lets secret scanners recognise a key and lets us reject a
 * mistyped key without a database lookup. Keys are stored only as SHA-256 hashes (190 bits of entropy make
 * a slow hash unnecessary).
 */
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'folio_sk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LEN = 32;
const CHECKSUM_LEN = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LEN + CHECKSUM_LEN}}$`);

/** Uniform base62 string: rejection sampling on random bytes (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(text: string): number {
  let c = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** CRC32 as 6 base62 digits (62^6 > 2^32), left-padded with zeros. */
export function checksum62(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LEN; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LEN);
  return `${KEY_PREFIX}${random}${checksum62(random)}`;
}

/** Format and checksum only; says nothing about whether the key exists. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const random = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LEN);
  const sum = key.slice(KEY_PREFIX.length + RANDOM_LEN);
  return timingSafeEqual(Buffer.from(checksum62(random)), Buffer.from(sum));
}

/** One-shot hashing: a third of createHash's cost, on every authenticated request. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function hashesEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Public identifier of a key, safe to show and log. */
export function generateKeyId(): string {
  return `key_${randomBase62(16)}`;
}

/** A 6-digit verification code, uniformly drawn. */
export function generateCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}
