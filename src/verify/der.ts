/**
 * Reading DER tag/length headers only: enough to cut a structure into raw element slices without decoding
 * it (asn1js decodes the parts whose values are needed). Bounded by the enclosing element; indefinite (BER)
 * lengths and multi-byte tags are refused with undefined so callers can fall back to a full parse.
 */
export interface Tlv {
  tag: number;
  /** Header start, content start and content end, as offsets into the buffer. */
  at: number;
  start: number;
  end: number;
}

/** One DER tag-length header; undefined for indefinite (BER) or malformed lengths and multi-byte tags. */
export function tlv(buf: Uint8Array, at: number, limit: number): Tlv | undefined {
  if (at + 2 > limit) return undefined;
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let len = buf[at + 1]!;
  let p = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > limit) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++]!;
  }
  if (p + len > limit) return undefined;
  return { tag, at, start: p, end: p + len };
}

export function tlvChildren(buf: Uint8Array, parent: Tlv): Tlv[] | undefined {
  const out: Tlv[] = [];
  for (let p = parent.start; p < parent.end; ) {
    const t = tlv(buf, p, parent.end);
    if (!t) return undefined;
    out.push(t);
    p = t.end;
  }
  return out;
}

