/** Text decoding and XML escaping shared by the converters. */

/** Bytes → string: UTF-16 by BOM, otherwise UTF-8 with invalid sequences replaced (U+FFFD), never rejected. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes);
  return text;
}

export { xmlAttr, xmlText } from '../docx/wordml/escape.js';
