/**
 * RFC 7512 PKCS#11 URIs (SIGNING_PKCS11_URI): `pkcs11:token=folio;object=signer;type=private?pin-source=file:/run/secrets/pin`.
 *
 * Parsed exactly by the RFC's grammar (§2.3): path attributes split on ";", query attributes on "&", each
 * `name=value` at its first "="; values percent-decoded (RFC 3986 §2.1, two hex digits after every "%"), made of
 * unreserved characters, the reserved ones each component lets through unencoded (`pk11-path-res-avail`,
 * `pk11-query-res-avail`) and percent-encodings — anything else (a space, "/" in the path, "#") is refused.
 * `id` is a byte string (CKA_ID), `object` the label's UTF-8 bytes (CKA_LABEL); the other text attributes are
 * UTF-8. An attribute may appear once (§2.3), and `pin-source`/`pin-value` are one or the other. Vendor
 * attributes (`x-…`) and attributes this parser does not know are refused rather than ignored: an attribute
 * dropped silently could make the URI name another key than the operator meant.
 *
 * Written here because no npm package parses RFC 7512 (p11-kit's and the Go/Python parsers are not in Node).
 */

export class Pkcs11UriError extends Error {}

export type Pkcs11ObjectType = 'public' | 'private' | 'cert' | 'secret-key' | 'data';

export interface Pkcs11Uri {
  /** Token attributes (CK_TOKEN_INFO). */
  token?: string;
  manufacturer?: string;
  serial?: string;
  model?: string;
  /** Library attributes (CK_INFO). */
  libraryManufacturer?: string;
  libraryDescription?: string;
  libraryVersion?: { major: number; minor: number };
  /** Slot attributes (CK_SLOT_INFO, the slot's id). */
  slotDescription?: string;
  slotManufacturer?: string;
  slotId?: bigint;
  /** Object attributes: CKA_LABEL's bytes, CKA_CLASS, CKA_ID. */
  object?: Uint8Array;
  type?: Pkcs11ObjectType;
  id?: Uint8Array;
  /** Query: where the PIN is (a file), or the PIN itself. */
  pinSource?: string;
  pinValue?: string;
  moduleName?: string;
  modulePath?: string;
  /** The URI as written without its pin-value: safe to log and to show in errors. */
  display: string;
}

const UNRESERVED = 'A-Za-z0-9\\-._~';
const RES_AVAIL = ":\\[\\]@!$'()*+,=";
/** pk11-pchar and pk11-qchar without their pct-encoded alternative (checked apart). */
const PATH_CHAR = new RegExp(`^[${UNRESERVED}${RES_AVAIL}&%]*$`);
const QUERY_CHAR = new RegExp(`^[${UNRESERVED}${RES_AVAIL}/?|%]*$`);

const PATH_TEXT = {
  token: 'token',
  manufacturer: 'manufacturer',
  serial: 'serial',
  model: 'model',
  'library-manufacturer': 'libraryManufacturer',
  'library-description': 'libraryDescription',
  'slot-description': 'slotDescription',
  'slot-manufacturer': 'slotManufacturer',
} as const;
const QUERY_TEXT = { 'pin-source': 'pinSource', 'pin-value': 'pinValue', 'module-name': 'moduleName', 'module-path': 'modulePath' } as const;
const TYPES: readonly Pkcs11ObjectType[] = ['public', 'private', 'cert', 'secret-key', 'data'];

/** The octets of a percent-encoded value; refuses a "%" not followed by two hex digits. */
export function percentDecode(value: string, name: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0x25) {
      // Only ASCII reaches here (the character classes above); a raw non-ASCII character was refused.
      out.push(c);
      continue;
    }
    const hex = value.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Pkcs11UriError(`${name}: "%" must be followed by two hex digits`);
    out.push(parseInt(hex, 16));
    i += 2;
  }
  return Uint8Array.from(out);
}

function utf8(bytes: Uint8Array, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Pkcs11UriError(`${name} is not UTF-8 once percent-decoded`);
  }
}

function splitAttribute(attr: string, component: 'path' | 'query'): [string, string] {
  const eq = attr.indexOf('=');
  if (eq <= 0) throw new Pkcs11UriError(`"${attr}" in the ${component} is not name=value`);
  return [attr.slice(0, eq), attr.slice(eq + 1)];
}

export function parsePkcs11Uri(text: string): Pkcs11Uri {
  if (!text.startsWith('pkcs11:')) throw new Pkcs11UriError('must start with "pkcs11:"');
  const rest = text.slice('pkcs11:'.length);
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? undefined : rest.slice(q + 1);
  const uri: Omit<Pkcs11Uri, 'display'> & Record<string, unknown> = {};
  const seen = new Set<string>();
  const once = (name: string) => {
    if (seen.has(name)) throw new Pkcs11UriError(`${name} appears more than once`);
    seen.add(name);
  };

  for (const attr of path === '' ? [] : path.split(';')) {
    const [name, raw] = splitAttribute(attr, 'path');
    if (!PATH_CHAR.test(raw)) throw new Pkcs11UriError(`${name}: characters outside RFC 7512's path characters must be percent-encoded`);
    once(name);
    const bytes = percentDecode(raw, name);
    if (name in PATH_TEXT) uri[PATH_TEXT[name as keyof typeof PATH_TEXT]] = utf8(bytes, name);
    else if (name === 'object') uri.object = bytes;
    else if (name === 'id') uri.id = bytes;
    else if (name === 'type') {
      const type = utf8(bytes, name);
      if (!TYPES.includes(type as Pkcs11ObjectType)) throw new Pkcs11UriError(`type must be one of ${TYPES.join(', ')}, got "${type}"`);
      uri.type = type as Pkcs11ObjectType;
    } else if (name === 'library-version') {
      const m = /^(\d+)(?:\.(\d+))?$/.exec(utf8(bytes, name));
      if (!m) throw new Pkcs11UriError('library-version must be DIGITS or DIGITS.DIGITS');
      uri.libraryVersion = { major: Number(m[1]), minor: Number(m[2] ?? 0) };
    } else if (name === 'slot-id') {
      const v = utf8(bytes, name);
      if (!/^\d+$/.test(v)) throw new Pkcs11UriError('slot-id must be a decimal number');
      uri.slotId = BigInt(v);
    } else if (name.startsWith('x-')) throw new Pkcs11UriError(`the vendor attribute ${name} is not understood by Folio`);
    else throw new Pkcs11UriError(`unknown path attribute ${name}`);
  }

  const shown: string[] = [];
  for (const attr of query === undefined || query === '' ? [] : query.split('&')) {
    const [name, raw] = splitAttribute(attr, 'query');
    if (!QUERY_CHAR.test(raw)) throw new Pkcs11UriError(`${name}: characters outside RFC 7512's query characters must be percent-encoded`);
    once(name);
    if (name in QUERY_TEXT) uri[QUERY_TEXT[name as keyof typeof QUERY_TEXT]] = utf8(percentDecode(raw, name), name);
    else if (name.startsWith('x-')) throw new Pkcs11UriError(`the vendor attribute ${name} is not understood by Folio`);
    else throw new Pkcs11UriError(`unknown query attribute ${name}`);
    if (name !== 'pin-value') shown.push(attr);
  }
  if (uri.pinSource !== undefined && uri.pinValue !== undefined) throw new Pkcs11UriError('has both pin-source and pin-value: give one');
  return { ...(uri as Omit<Pkcs11Uri, 'display'>), display: `pkcs11:${path}${shown.length ? `?${shown.join('&')}` : ''}` };
}

/**
 * The file a pin-source names: a `file:` URI (`file:/run/secrets/pin`, `file:///run/secrets/pin`) or an
 * absolute path. Other sources (RFC 7512 lets "|program" run a command) are refused: Folio runs nothing to get a PIN.
 */
export function pinSourcePath(source: string): string {
  if (source.startsWith('file:')) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new Pkcs11UriError(`pin-source ${source} is not a file: URI`);
    }
    if (url.host !== '' && url.host !== 'localhost') throw new Pkcs11UriError(`pin-source ${source} names another host`);
    return decodeURIComponent(url.pathname);
  }
  if (source.startsWith('/')) return source;
  throw new Pkcs11UriError(`pin-source must be a file: URI or an absolute path, got "${source}"`);
}
