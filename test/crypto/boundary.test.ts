/**
 * ASN.1 parsing goes through src/crypto (ARCHITECTURE.md): outside it no file imports asn1js or pkijs, parses
 * with AsnConvert/AsnParser directly, or compares DER tag bytes by hand; and src/crypto imports nothing of the
 * rest of src (the PDF layer uses the ASN.1 layer, never the other way round; eslint.config.js says the same
 * for src/pdf).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.join(import.meta.dirname, '../../src');
const files = (fs.readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ rel: f.split(path.sep).join('/'), text: fs.readFileSync(path.join(SRC, f), 'utf8') }));
const outside = files.filter((f) => !f.rel.startsWith('crypto/'));
const offenders = (pattern: RegExp, among = outside) => among.filter((f) => pattern.test(f.text)).map((f) => f.rel);

describe('ASN.1 goes through src/crypto', () => {
  it('finds the source files', () => {
    expect(files.some((f) => f.rel === 'crypto/der.ts')).toBe(true);
    expect(outside.length).toBeGreaterThan(100);
  });

  it('no file outside src/crypto imports asn1js or pkijs', () => {
    expect(offenders(/from\s+['"](asn1js|pkijs)['"]/)).toEqual([]);
  });

  it("no file outside src/crypto parses with the schema library directly (parseAs does, with the caller's error)", () => {
    expect(offenders(/\b(AsnConvert|AsnParser)\.parse\s*\(|\bfromBER\s*\(/)).toEqual([]);
  });

  it('no file outside src/crypto compares DER tag bytes (der.ts names them: TAG, contextTag)', () => {
    expect(offenders(/\.tag\s*[!=]==?\s*0x[0-9a-f]{2}\b/i)).toEqual([]);
  });

  it('src/crypto imports only itself and packages', () => {
    const crypto = files.filter((f) => f.rel.startsWith('crypto/'));
    const imports = crypto.flatMap((f) => [...f.text.matchAll(/from\s+['"](\.[^'"]*)['"]/g)].map((m) => `${f.rel}: ${m[1]}`));
    expect(imports.filter((i) => !/: \.\/[^/]+$/.test(i))).toEqual([]);
  });
});
