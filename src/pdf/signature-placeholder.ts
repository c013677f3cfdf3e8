/**
 * A PAdES signature dictionary (ISO 32000-1 §12.8.1, ETSI EN 319 142-1 §5.2) written with fixed-width
 * placeholders: /ByteRange as `[0 0000000000 0000000000 0000000000]` and /Contents as zeros. The update is
 * laid out once with them; then the range is written over its placeholder (same width, space-padded), the
 * bytes it covers are hashed, and the CMS is written into /Contents in place — nothing moves, so nothing is
 * laid out again. The signer (src/sign) decides what goes in; the syntax is written here.
 */
import { formatPdfDate, pdfHexText } from './text-string.js';

export interface SignaturePlaceholder {
  /** The complete `N 0 obj … endobj` bytes. */
  bytes: Uint8Array;
  /** Offsets inside `bytes`: the /ByteRange array and its width, the `<` of /Contents and its width with `<` and `>`. */
  byteRangeAt: number;
  byteRangeLength: number;
  contentsAt: number;
  contentsLength: number;
}

const BYTE_RANGE_SLOT = '[0 0000000000 0000000000 0000000000]';

/** The signature dictionary of a CAdES detached signature, with room for `contentsBytes` bytes of CMS. */
export function signatureDictionary(
  objectNumber: number,
  entries: { contentsBytes: number; signedAt: Date; name: string; reason: string },
): SignaturePlaceholder {
  const head = `${objectNumber} 0 obj\n<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange `;
  const mid = ' /Contents <';
  const contents = '0'.repeat(entries.contentsBytes * 2);
  const tail =
    `> /M (${formatPdfDate(entries.signedAt)}) /Name ${pdfHexText(entries.name, 'utf-16')} /Reason ${pdfHexText(entries.reason, 'utf-16')}` +
    ' /Prop_Build << /App << /Name /Folio >> >> >>\nendobj\n';
  return {
    bytes: Buffer.from(head + BYTE_RANGE_SLOT + mid + contents + tail, 'latin1'),
    byteRangeAt: head.length,
    byteRangeLength: BYTE_RANGE_SLOT.length,
    contentsAt: head.length + BYTE_RANGE_SLOT.length + mid.length - 1,
    contentsLength: contents.length + 2,
  };
}

/** Where a placeholder written at `at` in `out` has its /Contents, and the /ByteRange that leaves it out. */
export interface PlacedSignature {
  /** `[0, contentsStart, contentsEnd, rest]`: everything but the /Contents string. */
  byteRange: number[];
  contentsStart: number;
  contentsEnd: number;
}

/** Writes the /ByteRange of the placeholder written at `at` over its slot; throws if the numbers do not fit. */
export function placeByteRange(out: Uint8Array, at: number, p: SignaturePlaceholder): PlacedSignature {
  const contentsStart = at + p.contentsAt;
  const contentsEnd = contentsStart + p.contentsLength;
  const byteRange = [0, contentsStart, contentsEnd, out.length - contentsEnd];
  const text = `[${byteRange.join(' ')}]`.padEnd(p.byteRangeLength, ' ');
  if (text.length !== p.byteRangeLength) throw new Error('ByteRange does not fit its placeholder');
  out.set(Buffer.from(text, 'latin1'), at + p.byteRangeAt);
  return { byteRange, contentsStart, contentsEnd };
}

/** Writes `der` into /Contents as uppercase hex (the zeros after it stay); false when it does not fit. */
export function fillContents(out: Uint8Array, placed: PlacedSignature, der: Uint8Array): boolean {
  const hex = Buffer.from(der).toString('hex').toUpperCase();
  if (hex.length > placed.contentsEnd - placed.contentsStart - 2) return false;
  out.set(Buffer.from(hex, 'latin1'), placed.contentsStart + 1);
  return true;
}
