/**
 * The one module of Folio that reads DER by byte offset. Everything else builds and parses ASN.1 with the
 * @peculiar/asn1-* schemas (src/crypto/asn1.ts); a schema library cannot do what is here:
 * - cut a hostile CMS into raw slices by reading only tag/length headers, bounded by the enclosing element,
 *   so that the verifier hands exact original bytes (certificates, signed attributes, a timestamp token) to
 *   hashing and never decodes the megabytes it does not need — a schema parse decodes every element and
 *   re-encodes what it gives back;
 * - find one field's exact bytes (a certificate's issuer Name) to embed verbatim.
 * Indefinite lengths (BER, used by some PDF signers for the outer CMS layers) are followed to their
 * end-of-contents marker with a depth limit. Malformed input and multi-byte tags give undefined, and callers
 * fall back to a schema parse.
 *
 * `encodeTlv`, `encodeOid`, `encodeSetOfContents`, `encodeLength` and `DER` are the former hand writer, no
 * longer used by src (the signer builds its CMS with @peculiar/asn1-cms); they stay exported only because
 * src/pdf/index.ts re-exports them and test/pdf/core.test.ts tests them.
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

/**
 * The contents of an OCTET STRING element, primitive (04) or BER-constructed (24, pieces joined, nested at most
 * a few levels); undefined when `der` is not one.
 */
export function octetStringContents(der: Uint8Array, depth = 0): Uint8Array | undefined {
  const t = readTlv(der, 0, der.length);
  if (!t || t.end !== der.length) return undefined;
  if (t.tag === 0x04) return der.subarray(t.start, t.contentEnd);
  if (t.tag !== 0x24 || depth > 8) return undefined;
  const pieces: Uint8Array[] = [];
  for (const c of readTlvChildren(der, t) ?? [undefined]) {
    const piece = c && octetStringContents(der.subarray(c.at, c.end), depth + 1);
    if (!piece) return undefined;
    pieces.push(piece);
  }
  return new Uint8Array(Buffer.concat(pieces));
}

export interface CertificateFields {
  /** Content octets of the serialNumber INTEGER. */
  serial: Uint8Array;
  /** The issuer Name element as encoded. */
  issuer: Uint8Array;
  /** Each extension's OID content octets and extnValue content octets (the DER of the extension's value). */
  extensions: Array<{ oid: Uint8Array; value: Uint8Array }>;
}

/**
 * Serial number, issuer Name and extensions of a certificate, as slices of its bytes: the issuer is compared
 * and embedded byte for byte (a schema parse would give back a re-encoding), and reading headers only keeps
 * the verifier from decoding every certificate it is handed. Undefined when the headers do not read.
 */
export function certificateFields(cert: Uint8Array): CertificateFields | undefined {
  const outer = readTlv(cert, 0, cert.length);
  const tbs = outer && readTlvChildren(cert, outer)?.[0];
  const f = tbs && readTlvChildren(cert, tbs);
  if (!f) return undefined;
  const off = f[0]?.tag === 0xa0 ? 1 : 0; // explicit version
  const serial = f[off];
  const issuer = f[off + 2];
  if (!serial || !issuer || serial.tag !== 0x02 || issuer.tag !== 0x30) return undefined;
  const extensions: CertificateFields['extensions'] = [];
  const wrap = f.find((t) => t.tag === 0xa3);
  const seq = wrap && readTlv(cert, wrap.start, wrap.contentEnd);
  for (const ext of (seq && readTlvChildren(cert, seq)) ?? []) {
    const e = readTlvChildren(cert, ext);
    const value = e?.[e.length - 1];
    if (!e || e.length < 2 || e[0]!.tag !== 0x06 || value?.tag !== 0x04) continue;
    extensions.push({ oid: cert.subarray(e[0]!.start, e[0]!.contentEnd), value: cert.subarray(value.start, value.contentEnd) });
  }
  return { serial: cert.subarray(serial.start, serial.contentEnd), issuer: cert.subarray(issuer.at, issuer.end), extensions };
}
