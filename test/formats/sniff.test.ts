import { describe, expect, it } from 'vitest';
import { isCompoundFile, isPdf, isZip, pdfHeaderOffset, pdfHeaderVersion, sniff } from '../../src/formats/sniff.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('sniff', () => {
  it('finds a PDF header anywhere in the first 1024 bytes, with a version digit', () => {
    expect(pdfHeaderOffset(bytes('%PDF-1.7\n'))).toBe(0);
    expect(pdfHeaderOffset(bytes(' '.repeat(1000) + '%PDF-2.0\n'))).toBe(1000);
    expect(pdfHeaderOffset(bytes(' '.repeat(1020) + '%PDF-2.0\n'))).toBe(-1);
    expect(isPdf(bytes('%PDF-x'))).toBe(false);
    expect(pdfHeaderVersion(bytes('junk%PDF-1.4\n'))).toBe('1.4');
  });
  it('tells ZIP, compound files, binary and text apart, ZIP first', () => {
    expect(isZip(bytes('PK\x03\x04rest'))).toBe(true);
    expect(isZip(bytes('PK\x05\x06'))).toBe(true);
    expect(isZip(bytes('PK\x07\x08'))).toBe(false);
    expect(sniff(bytes('PK\x03\x04%PDF-1.7'))).toBe('zip');
    expect(isCompoundFile(Uint8Array.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0]))).toBe(true);
    expect(sniff(Uint8Array.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))).toBe('cfb');
    expect(sniff(bytes('%PDF-1.7'))).toBe('pdf');
    expect(sniff(bytes('abc\0def'))).toBe('binary');
    expect(sniff(bytes('# Title\n'))).toBe('text');
  });
});
