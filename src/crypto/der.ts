/**
 * DER, and the BER that signatures from other software use, read and written by byte offset: the one module of
 * Folio that knows how ASN.1 is encoded. Structures are built and parsed with the @peculiar/asn1-* schemas
 * (asn1.ts); this module does what a schema parser cannot:
 * - cut a hostile CMS into raw slices by reading tag/length headers only, each bounded by its enclosing element,
 *   so that the verifier hashes and compares the exact original bytes (certificates, signed attributes, a
 *   timestamp token) and never decodes the megabytes it does not need (a schema parse decodes every element and
 *   gives back re-encodings);
 * - find one field's exact bytes (a certificate's issuer Name, its subjectPublicKey) to compare or embed;
 * - write the few elements not worth a schema (an OID's content octets, a DigestInfo, a re-tagged SET).
 *
 * What the reader accepts: low tag numbers (a multi-byte tag is refused: no CMS, X.509, OCSP or TSP structure
 * uses one, and callers then fall back to a schema parse); definite lengths in up to 4 length octets, minimal or
 * not (BER); indefinite lengths on constructed elements only, nested at most 16 deep. Adobe Acrobat writes its
 * CMS with indefinite lengths on the outer layers (ContentInfo, [0], SignedData, encapContentInfo and the
 * certificates, test/crypto/fixtures/acrobat.p7s) and Java and Windows signers write constructed OCTET STRINGs;
 * pyHanko, iText and Folio write DER.
 *
 * Bounds, for any bytes: the reader never descends into definite-length content on its own (a 10,000-deep
 * nest costs one header per level a caller asks for); finding the end of an indefinite length recurses at most
 * `DER_LIMITS.indefiniteDepth` levels; one `readChildren` returns at most `DER_LIMITS.children` elements unless
 * its caller allows more (a CRL's entries); nothing reads past the enclosing element. Every refusal is a
 * `DerError`, and nothing else is thrown (test/crypto/der.test.ts); callers map it, with `tryDer` to undefined
 * (then a schema fallback, or their own answer) or to their own error.
 */

/** Why bytes did not read as DER/BER. */
export type DerErrorReason = 'truncated' | 'length' | 'tag' | 'depth' | 'count' | 'shape';

export class DerError extends Error {
  override readonly name = 'DerError';
  constructor(
    readonly reason: DerErrorReason,
    message: string,
    /** Byte offset of the element the reader was at. */
    readonly offset: number,
  ) {
    super(`${message} (byte ${offset})`);
  }
}

/** Universal tags Folio reads and writes, with the constructed bit where the type is constructed. */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  /** An OCTET STRING in pieces (BER constructed form). */
  OCTET_STRING_PIECES: 0x24,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** A context-specific tag [n]: constructed for EXPLICIT tagging and for IMPLICIT tagging of a constructed type. */
export const contextTag = (n: number, constructed = true): number => 0x80 | (constructed ? 0x20 : 0) | n;

export const DER_LIMITS = {
  /** Length octets after 0x81..0x84: lengths below 4 GiB, more than any buffer Folio reads. */
  lengthOctets: 4,
  /** Indefinite-length elements nested in one another (Acrobat's CMS: 4; BER OCTET STRING pieces add a few). */
  indefiniteDepth: 16,
  /** Elements one `readChildren` returns unless its caller allows more: bounds the memory a 4 MB SET of NULLs takes. */
  children: 16_384,
  /** Levels of a constructed OCTET STRING's pieces (the outer one counted). */
  octetStringDepth: 9,
  /** Content octets of an OBJECT IDENTIFIER. */
  oidOctets: 256,
} as const;

/** One element's header: its tag and where its header, content and end are in the buffer. */
export interface Tlv {
  tag: number;
  /** Header start and content start; content ends at `contentEnd`, the element (with any end-of-contents) at `end`. */
  at: number;
  start: number;
  contentEnd: number;
  end: number;
}

function readAt(buf: Uint8Array, at: number, limit: number, depth: number): Tlv {
  if (at + 2 > limit) throw new DerError('truncated', 'element header past the end', at);
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('tag', 'multi-byte tag', at);
  let len = buf[at + 1]!;
  let p = at + 2;
  if (len === 0x80) {
    // Indefinite length: only constructed elements; the children run up to the 00 00 end-of-contents marker.
    if (!(tag & 0x20)) throw new DerError('length', 'indefinite length on a primitive element', at);
    if (depth >= DER_LIMITS.indefiniteDepth) throw new DerError('depth', `indefinite lengths nested over ${DER_LIMITS.indefiniteDepth} deep`, at);
    for (let q = p; ;) {
      if (q + 2 > limit) throw new DerError('truncated', 'no end-of-contents marker', at);
      if (buf[q] === 0 && buf[q + 1] === 0) return { tag, at, start: p, contentEnd: q, end: q + 2 };
      q = readAt(buf, q, limit, depth + 1).end;
    }
  }
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n > DER_LIMITS.lengthOctets) throw new DerError('length', `${n} length octets`, at);
    if (p + n > limit) throw new DerError('truncated', 'length octets past the end', at);
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++]!;
  }
  if (p + len > limit) throw new DerError('truncated', 'content past the end of the enclosing element', at);
  return { tag, at, start: p, contentEnd: p + len, end: p + len };
}

/** The element whose header starts at `at`, within `buf[.. limit)`. */
export function readElement(buf: Uint8Array, at = 0, limit = buf.length): Tlv {
  return readAt(buf, at, Math.min(limit, buf.length), 0);
}

/** The one element `buf` holds, nothing after it; with `tag`, it must be one. */
export function readSingle(buf: Uint8Array, tag?: number): Tlv {
  const t = readAt(buf, 0, buf.length, 0);
  if (t.end !== buf.length) throw new DerError('shape', 'bytes after the element', t.end);
  return tag === undefined ? t : expectTag(t, tag);
}

/** `t` when its tag is `tag`. */
export function expectTag(t: Tlv, tag: number): Tlv {
  if (t.tag !== tag) throw new DerError('shape', `tag 0x${t.tag.toString(16)} where 0x${tag.toString(16)} was expected`, t.at);
  return t;
}

/** The elements inside a constructed element, at most `max` of them. */
export function readChildren(buf: Uint8Array, parent: Tlv, max: number = DER_LIMITS.children): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.start; p < parent.contentEnd;) {
    if (out.length >= max) throw new DerError('count', `more than ${max} elements`, parent.at);
    const t = readAt(buf, p, parent.contentEnd, 0);
    out.push(t);
    p = t.end;
  }
  return out;
}

/** The element an EXPLICIT tag wraps (its first child). */
export function readInner(buf: Uint8Array, explicit: Tlv): Tlv {
  return readAt(buf, explicit.start, explicit.contentEnd, 0);
}

/** The element's bytes, header included (what is hashed or embedded verbatim). */
export const elementBytes = (buf: Uint8Array, t: Tlv): Uint8Array => buf.subarray(t.at, t.end);

/** The element's content octets. */
export const contentBytes = (buf: Uint8Array, t: Tlv): Uint8Array => buf.subarray(t.start, t.contentEnd);

/** `read()`'s value, or undefined when the bytes did not read (a DerError); any other error is not this module's to hide. */
export function tryDer<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if (e instanceof DerError) return undefined;
    throw e;
  }
}

// ---- values ----

/**
 * The contents of an OCTET STRING element, primitive or BER-constructed (pieces joined, nested at most
 * `DER_LIMITS.octetStringDepth` levels); undefined when `der` is not exactly one.
 */
export function octetStringContents(der: Uint8Array): Uint8Array | undefined {
  return tryDer(() => octets(der, readSingle(der), 0));
}

function octets(buf: Uint8Array, t: Tlv, depth: number): Uint8Array {
  if (t.tag === TAG.OCTET_STRING) return contentBytes(buf, t);
  if (t.tag !== TAG.OCTET_STRING_PIECES) throw new DerError('shape', 'not an OCTET STRING', t.at);
  if (depth >= DER_LIMITS.octetStringDepth) throw new DerError('depth', 'OCTET STRING pieces nested too deep', t.at);
  return new Uint8Array(Buffer.concat(readChildren(buf, t).map((c) => octets(buf, c, depth + 1))));
}

/**
 * The dotted form of an OBJECT IDENTIFIER's content octets; undefined when they do not decode (empty, an
 * unterminated arc, an arc beyond 2^53, more than `DER_LIMITS.oidOctets` octets).
 */
export function decodeOid(content: Uint8Array): string | undefined {
  if (content.length === 0 || content.length > DER_LIMITS.oidOctets || content[content.length - 1]! & 0x80) return undefined;
  const arcs: number[] = [];
  let v = 0;
  for (let i = 0; i < content.length; i++) {
    v = v * 128 + (content[i]! & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 256) return undefined;
    if (!(content[i]! & 0x80)) {
      arcs.push(v);
      v = 0;
    }
  }
  const first = arcs[0]!;
  const head = first < 40 ? `0.${first}` : first < 80 ? `1.${first - 40}` : `2.${first - 80}`;
  return arcs.length === 1 ? head : `${head}.${arcs.slice(1).join('.')}`;
}

// ---- certificates and keys ----

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
 * the verifier from decoding every certificate it is handed. Undefined when the headers do not read; an
 * extension that does not read is left out.
 */
export function certificateFields(cert: Uint8Array): CertificateFields | undefined {
  return tryDer(() => {
    const tbs = readChildren(cert, readElement(cert))[0];
    if (!tbs) throw new DerError('shape', 'no TBSCertificate', 0);
    const f = readChildren(cert, tbs);
    const off = f[0]?.tag === contextTag(0) ? 1 : 0; // explicit version
    const serial = f[off];
    const issuer = f[off + 2];
    if (!serial || !issuer || serial.tag !== TAG.INTEGER || issuer.tag !== TAG.SEQUENCE) throw new DerError('shape', 'not a TBSCertificate', tbs.at);
    const extensions: CertificateFields['extensions'] = [];
    const wrap = f.find((t) => t.tag === contextTag(3));
    const list = wrap && tryDer(() => readChildren(cert, readInner(cert, wrap)));
    for (const ext of list ?? []) {
      const e = tryDer(() => readChildren(cert, ext));
      const value = e?.[e.length - 1];
      if (!e || e.length < 2 || e[0]!.tag !== TAG.OID || value?.tag !== TAG.OCTET_STRING) continue;
      extensions.push({ oid: contentBytes(cert, e[0]!), value: contentBytes(cert, value) });
    }
    return { serial: contentBytes(cert, serial), issuer: elementBytes(cert, issuer), extensions };
  });
}

/**
 * The subjectPublicKey BIT STRING's key octets (after the unused-bits octet) of a SubjectPublicKeyInfo: what an
 * OCSP CertID's issuerKeyHash hashes. Undefined when `spki` does not read as one.
 */
export function spkiKeyBits(spki: Uint8Array): Uint8Array | undefined {
  return tryDer(() => {
    const bits = readChildren(spki, readElement(spki))[1];
    if (!bits || bits.tag !== TAG.BIT_STRING || bits.contentEnd - bits.start < 1) throw new DerError('shape', 'no subjectPublicKey', 0);
    return spki.subarray(bits.start + 1, bits.contentEnd);
  });
}

// ---- writer ----

/** The length octets of a DER element of `length` content octets (short form below 128, else minimal long form). */
export function encodeLength(length: number): Uint8Array {
  if (!Number.isSafeInteger(length) || length < 0 || length > 0xffffffff) throw new RangeError(`no DER length for ${length}`);
  if (length < 0x80) return Uint8Array.of(length);
  const octets: number[] = [];
  for (let v = length; v > 0; v = Math.floor(v / 256)) octets.unshift(v % 256);
  return Uint8Array.of(0x80 | octets.length, ...octets);
}

/** One DER element: `tag`, the length of the contents, the contents (already-encoded children, or a primitive's octets). */
export function encodeElement(tag: number, ...contents: Uint8Array[]): Uint8Array {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xff || (tag & 0x1f) === 0x1f) throw new RangeError(`no single-octet tag ${tag}`);
  let length = 0;
  for (const c of contents) length += c.length;
  const head = encodeLength(length);
  const out = new Uint8Array(1 + head.length + length);
  out[0] = tag;
  out.set(head, 1);
  let p = 1 + head.length;
  for (const c of contents) {
    out.set(c, p);
    p += c.length;
  }
  return out;
}

/**
 * A copy of the single element `der` under another tag, its length and content unchanged: the SignerInfo's
 * [0] IMPLICIT signed attributes are signed as a SET, over their original encoding (a BER attribute set must not
 * verify under a re-encoding).
 */
export function retag(der: Uint8Array, tag: number): Uint8Array {
  readSingle(der);
  const out = new Uint8Array(der);
  out[0] = tag;
  return out;
}

/** The content octets of the OBJECT IDENTIFIER `dotted` ("2.5.29.14"). */
export function oidContent(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((a) => (/^\d+$/.test(a) ? Number(a) : NaN));
  const [first, second] = arcs;
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a)) || first! > 2 || (first! < 2 && second! >= 40))
    throw new RangeError(`not an OBJECT IDENTIFIER: ${dotted}`);
  const out: number[] = [];
  for (const arc of [first! * 40 + second!, ...arcs.slice(2)]) {
    const groups = [arc % 128];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v % 128) | 0x80);
    out.push(...groups);
  }
  return Uint8Array.from(out);
}
