/**
 * The one DER module of Folio's PDF signatures (the CMS in a signature's /Contents): reading tag/length
 * headers for the verifier and writing DER elements for the signer. Values are decoded and OIDs encoded
 * with asn1js; this module only cuts and joins elements, so it needs no schema.
 *
 * Reading BER/DER tag/length headers only: enough to cut a structure into raw element slices without decoding
 * it (asn1js decodes the parts whose values are needed). Every read is bounded by the enclosing element;
 * indefinite lengths (BER, used by some PDF signers for the outer CMS layers) are followed to their
 * end-of-contents marker with a depth limit. Malformed input and multi-byte tags give undefined, and callers
 * fall back to a full asn1js parse.
 */
import * as asn1js from 'asn1js';

export interface Tlv {
  tag: number;
  /** Header start and content start; content ends at `contentEnd`, the element (with any EOC) at `end`. */
  at: number;
  start: number;
  contentEnd: number;
  end: number;
}

const MAX_INDEFINITE_DEPTH = 16;

/** Reads one tag-length header at `at`; undefined for malformed lengths or multi-byte tags. */
export function readTlv(buf: Uint8Array, at: number, limit: number, depth = 0): Tlv | undefined {
  if (at + 2 > limit) return undefined;
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let len = buf[at + 1]!;
  let p = at + 2;
  if (len === 0x80) {
    // Indefinite length: only constructed elements; children up to the 00 00 end-of-contents marker.
    if (!(tag & 0x20) || depth >= MAX_INDEFINITE_DEPTH) return undefined;
    for (let q = p; q + 2 <= limit;) {
      if (buf[q] === 0 && buf[q + 1] === 0) return { tag, at, start: p, contentEnd: q, end: q + 2 };
      const child = readTlv(buf, q, limit, depth + 1);
      if (!child) return undefined;
      q = child.end;
    }
    return undefined;
  }
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n > 4 || p + n > limit) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++]!;
  }
  if (p + len > limit) return undefined;
  return { tag, at, start: p, contentEnd: p + len, end: p + len };
}

/** Reads the elements inside a constructed element; undefined when one of them is malformed. */
export function readTlvChildren(buf: Uint8Array, parent: Tlv): Tlv[] | undefined {
  const out: Tlv[] = [];
  for (let p = parent.start; p < parent.contentEnd;) {
    const t = readTlv(buf, p, parent.contentEnd);
    if (!t) return undefined;
    out.push(t);
    p = t.end;
  }
  return out;
}

/** Tag bytes of the universal and context-specific types the signer writes. */
export const DER = {
  INTEGER: 0x02,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  SEQUENCE: 0x30,
  SET: 0x31,
  CONTEXT_0: 0xa0,
  CONTEXT_1: 0xa1,
  CONTEXT_4: 0xa4,
} as const;

/** DER length octets. */
export function encodeLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Writes one DER element from a tag byte and already-encoded contents (the inverse of readTlv). */
export function encodeTlv(tag: number, ...contents: Uint8Array[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

/** An OBJECT IDENTIFIER element, encoded by asn1js. */
export const encodeOid = (value: string): Buffer => Buffer.from(new asn1js.ObjectIdentifier({ value }).toBER(false));

/** The contents of a DER SET OF: its elements sorted by their encodings, as DER requires. */
export const encodeSetOfContents = (items: Buffer[]): Buffer => Buffer.concat([...items].sort(Buffer.compare));
