/**
 * Reading BER/DER tag/length headers only: enough to cut a structure into raw element slices without decoding
 * it (asn1js decodes the parts whose values are needed). Every read is bounded by the enclosing element;
 * indefinite lengths (BER, used by some PDF signers for the outer CMS layers) are followed to their
 * end-of-contents marker with a depth limit. Malformed input and multi-byte tags give undefined, and callers
 * fall back to a full asn1js parse.
 */
export interface Tlv {
  tag: number;
  /** Header start and content start; content ends at `contentEnd`, the element (with any EOC) at `end`. */
  at: number;
  start: number;
  contentEnd: number;
  end: number;
}

const MAX_INDEFINITE_DEPTH = 16;

/** One tag-length header at `at`; undefined for malformed lengths or multi-byte tags. */
export function tlv(buf: Uint8Array, at: number, limit: number, depth = 0): Tlv | undefined {
  if (at + 2 > limit) return undefined;
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let len = buf[at + 1]!;
  let p = at + 2;
  if (len === 0x80) {
    // Indefinite length: only constructed elements; children up to the 00 00 end-of-contents marker.
    if (!(tag & 0x20) || depth >= MAX_INDEFINITE_DEPTH) return undefined;
    for (let q = p; q + 2 <= limit; ) {
      if (buf[q] === 0 && buf[q + 1] === 0) return { tag, at, start: p, contentEnd: q, end: q + 2 };
      const child = tlv(buf, q, limit, depth + 1);
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

export function tlvChildren(buf: Uint8Array, parent: Tlv): Tlv[] | undefined {
  const out: Tlv[] = [];
  for (let p = parent.start; p < parent.contentEnd; ) {
    const t = tlv(buf, p, parent.contentEnd);
    if (!t) return undefined;
    out.push(t);
    p = t.end;
  }
  return out;
}
