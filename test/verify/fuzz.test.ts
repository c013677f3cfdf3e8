/**
 * Mutation fuzzing (deterministic seeds) over signed files of the corpus and our own: truncations, byte
 * flips, spliced duplicates and deleted spans. Every mutant must get an answer or a FolioError with a
 * contract code, never another exception.
 */
import { describe, expect, it } from 'vitest';
import { verifyPdf } from '../../src/verify/index.js';
import { FolioError } from '../../src/errors.js';
import { corpusFile } from './fixtures.js';

const FILES = [
  'pdf-insecurity-2019/isa-3.pdf',
  'certification-2021/02_NDA_cert_p2_sign_original.pdf',
  'pyhanko-coverage/minimal-two-fields-signed-twice.pdf',
  'shadow-2021/hide-and-replace-v1_4-manipulated.pdf',
  'pyhanko-coverage/form-update-override-appearance-stream-sneaky.pdf',
];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function mutate(src: Uint8Array, r: () => number): Uint8Array {
  const b = Buffer.from(src);
  const at = Math.floor(r() * b.length);
  switch (Math.floor(r() * 5)) {
    case 0:
      return new Uint8Array(b.subarray(0, at));
    case 1: {
      for (let i = 0; i < 8; i++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
      return new Uint8Array(b);
    }
    case 2: {
      const len = Math.floor(r() * 2000);
      return new Uint8Array(Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]));
    }
    case 3: {
      const len = Math.floor(r() * 500);
      return new Uint8Array(Buffer.concat([b.subarray(0, at), b.subarray(at + len)]));
    }
    default: {
      // Corrupt a structural keyword or number near a random xref / obj / stream marker.
      const text = b.toString('latin1');
      const keys = ['xref', 'startxref', 'obj', 'stream', '/Length', '/Prev', '/ByteRange', '/Contents', 'trailer', '%%EOF'];
      const k = keys[Math.floor(r() * keys.length)]!;
      const p = text.indexOf(k, at) >= 0 ? text.indexOf(k, at) : text.indexOf(k);
      if (p >= 0) b[p + Math.floor(r() * k.length)] = 0x7f & Math.floor(r() * 256);
      return new Uint8Array(b);
    }
  }
}

describe('mutation fuzzing', () => {
  for (const file of FILES) {
    it(`${file}: 150 mutants all answered or refused with a contract error`, () => {
      const src = corpusFile(file);
      const r = rng(file.length * 7919);
      const codes = new Map<string, number>();
      for (let i = 0; i < 150; i++) {
        const m = mutate(src, r);
        try {
          const res = verifyPdf(m, { trust: { anchors: [], service: [] } });
          codes.set(res.indication, (codes.get(res.indication) ?? 0) + 1);
        } catch (e) {
          if (!(e instanceof FolioError)) throw new Error(`mutant ${i} of ${file} threw ${(e as Error).stack}`);
          expect(['INVALID_FILE_FORMAT', 'UNPROCESSABLE_DOCUMENT']).toContain(e.code);
          codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
        }
      }
      expect([...codes.values()].reduce((a, b) => a + b, 0)).toBe(150);
    });
  }
});
