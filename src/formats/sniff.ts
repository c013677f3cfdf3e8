/**
 * What a file is, from its first bytes: the one place every capability asks (issue 26: before, two `isZip`
 * disagreed and five places looked for `%PDF-` each their own way). Signatures only, no parsing: the format's
 * home (src/pdf, src/docx) decides whether the file is readable.
 */

/** How far into a file a PDF header may start: Acrobat accepts junk before `%PDF-` within the first 1024 bytes. */
export const PDF_HEADER_WINDOW = 1024;

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1] as const;

/**
 * A ZIP archive: a local file header (`PK\3\4`, every package a writer makes) or the end record of an empty
 * archive (`PK\5\6`). Spanned archives (`PK\7\8`) are not packages any OOXML producer writes.
 */
export function isZip(b: Uint8Array): boolean {
  return b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6));
}

/** An OLE compound file: encrypted OOXML and legacy binary Office documents (.doc) look like this. */
export function isCompoundFile(b: Uint8Array): boolean {
  return b.length >= 8 && CFB_MAGIC.every((v, i) => b[i] === v);
}

/** Offset of `%PDF-<digit>` within the first PDF_HEADER_WINDOW bytes, or -1. */
export function pdfHeaderOffset(b: Uint8Array): number {
  const end = Math.min(b.length, PDF_HEADER_WINDOW) - 5;
  for (let i = 0; i < end; i++) {
    if (b[i] === 0x25 && b[i + 1] === 0x50 && b[i + 2] === 0x44 && b[i + 3] === 0x46 && b[i + 4] === 0x2d) {
      const d = b[i + 5]!;
      if (d >= 0x30 && d <= 0x39) return i;
    }
  }
  return -1;
}

/** A PDF by its header (`%PDF-1.x`/`%PDF-2.x` within the first 1024 bytes). */
export const isPdf = (b: Uint8Array): boolean => pdfHeaderOffset(b) >= 0;

/** The header's version (`%PDF-1.7` → "1.7"), or undefined. */
export function pdfHeaderVersion(b: Uint8Array): string | undefined {
  const at = pdfHeaderOffset(b);
  if (at < 0) return undefined;
  const m = /^%PDF-(\d\.\d)/.exec(Buffer.from(b.buffer, b.byteOffset + at, Math.min(8, b.length - at)).toString('latin1'));
  return m?.[1];
}

export type SniffedKind = 'pdf' | 'zip' | 'cfb' | 'binary' | 'text';

/**
 * The kind of a file by its first bytes: a PDF, a ZIP (a DOCX or any other package), an OLE compound file,
 * other binary (a NUL in the first 8 KB), or text (Markdown, HTML — src/convert tells which by name and content).
 * A ZIP is checked first: a package may hold `%PDF-` within its first kilobyte (a stored PDF part).
 */
export function sniff(b: Uint8Array): SniffedKind {
  if (isZip(b)) return 'zip';
  if (isCompoundFile(b)) return 'cfb';
  if (isPdf(b)) return 'pdf';
  if (b.subarray(0, 8192).includes(0)) return 'binary';
  return 'text';
}
