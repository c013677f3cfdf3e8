/**
 * PKCS#12 (RFC 7292) reader for SIGNING_P12: verifies the password MAC, decrypts the bags and returns the
 * private key with its certificate chain. Handles what `openssl pkcs12 -export` writes today (PBES2 with
 * PBKDF2 + AES-CBC, HMAC-SHA-256 MAC) and with `-legacy` (pbeWithSHAAnd3-KeyTripleDES-CBC keys,
 * pbeWithSHAAnd40BitRC2-CBC certificates, HMAC-SHA-1 MAC). Node's OpenSSL build has no RC2, so RC2 is
 * implemented here (RFC 2268, decryption only).
 */
import crypto, { type KeyObject, X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import type { SigningIdentity } from '../services.js';
import { identityFromParts } from './identity.js';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  localKeyId: '1.2.840.113549.1.9.21',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
} as const;

/** PKCS#12 v1 password-based encryption schemes: cipher, key length, RC2 effective bits. */
const PKCS12_PBE: Record<string, { cipher: 'des-ede3-cbc' | 'des-ede-cbc' | 'rc2'; keyLength: number; rc2Bits?: number }> = {
  '1.2.840.113549.1.12.1.3': { cipher: 'des-ede3-cbc', keyLength: 24 },
  '1.2.840.113549.1.12.1.4': { cipher: 'des-ede-cbc', keyLength: 16 },
  '1.2.840.113549.1.12.1.5': { cipher: 'rc2', keyLength: 16, rc2Bits: 128 },
  '1.2.840.113549.1.12.1.6': { cipher: 'rc2', keyLength: 5, rc2Bits: 40 },
};

const PBES2_CIPHERS: Record<string, { cipher: string; keyLength: number }> = {
  '2.16.840.1.101.3.4.1.2': { cipher: 'aes-128-cbc', keyLength: 16 },
  '2.16.840.1.101.3.4.1.22': { cipher: 'aes-192-cbc', keyLength: 24 },
  '2.16.840.1.101.3.4.1.42': { cipher: 'aes-256-cbc', keyLength: 32 },
  '1.2.840.113549.3.7': { cipher: 'des-ede3-cbc', keyLength: 24 },
};

const HMAC_PRF: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};

const DIGESTS: Record<string, { name: string; blockSize: number }> = {
  '1.3.14.3.2.26': { name: 'sha1', blockSize: 64 },
  '2.16.840.1.101.3.4.2.4': { name: 'sha224', blockSize: 64 },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', blockSize: 64 },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', blockSize: 128 },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', blockSize: 128 },
};

export class Pkcs12Error extends Error {}

// ---- minimal ASN.1 navigation over asn1js (BER tolerant: Windows and Java write indefinite lengths) ----

type Node = asn1js.AsnType;

function parse(bytes: Uint8Array, what: string): Node {
  const r = asn1js.fromBER(bytes);
  if (r.offset === -1) throw new Pkcs12Error(`PKCS#12: cannot parse ${what}`);
  return r.result;
}

function kids(n: Node | undefined, what: string): Node[] {
  const v = (n as { valueBlock?: { value?: unknown } } | undefined)?.valueBlock?.value;
  if (!Array.isArray(v)) throw new Pkcs12Error(`PKCS#12: ${what} is not a sequence`);
  return v as Node[];
}

function oid(n: Node | undefined, what: string): string {
  if (!(n instanceof asn1js.ObjectIdentifier)) throw new Pkcs12Error(`PKCS#12: ${what} is not an OID`);
  return n.valueBlock.toString();
}

function int(n: Node | undefined, what: string): number {
  if (!(n instanceof asn1js.Integer)) throw new Pkcs12Error(`PKCS#12: ${what} is not an integer`);
  return n.valueBlock.valueDec;
}

/** Octets of an OCTET STRING or of an implicitly tagged one, primitive or constructed. */
function octets(n: Node | undefined, what: string): Uint8Array {
  if (!n) throw new Pkcs12Error(`PKCS#12: ${what} is missing`);
  const block = (n as { valueBlock: { value?: unknown; valueHexView?: Uint8Array } }).valueBlock;
  // asn1js also decodes a primitive OCTET STRING's content into `value` when it happens to be valid BER:
  // only a constructed encoding is made of pieces.
  if (n.idBlock.isConstructed && Array.isArray(block.value)) {
    return Buffer.concat((block.value as Node[]).map((c) => octets(c, what)));
  }
  if (block.valueHexView) return new Uint8Array(block.valueHexView);
  throw new Pkcs12Error(`PKCS#12: ${what} is not an octet string`);
}

function der(n: Node): Uint8Array {
  return new Uint8Array(n.toBER(false));
}

/** Explicit [0] content of a ContentInfo-like structure. */
function explicit0(n: Node | undefined, what: string): Node {
  const inner = kids(n, what)[0];
  if (!inner) throw new Pkcs12Error(`PKCS#12: ${what} is empty`);
  return inner;
}

// ---- key derivation (RFC 7292 appendix B) ----

function bmpPassword(password: string): Uint8Array {
  const out = Buffer.alloc((password.length + 1) * 2);
  for (let i = 0; i < password.length; i++) out.writeUInt16BE(password.charCodeAt(i), i * 2);
  return out; // ends with the two-byte NUL terminator
}

function pkcs12Kdf(hash: string, blockSize: number, password: Uint8Array, salt: Uint8Array, id: number, iterations: number, n: number): Uint8Array {
  const v = blockSize;
  const repeatTo = (src: Uint8Array): Uint8Array => {
    if (src.length === 0) return new Uint8Array(0);
    const len = v * Math.ceil(src.length / v);
    const out = new Uint8Array(len);
    for (let i = 0; i < len; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const D = new Uint8Array(v).fill(id);
  const I = Buffer.concat([repeatTo(salt), repeatTo(password)]);
  const out: Buffer[] = [];
  let produced = 0;
  while (produced < n) {
    let A = crypto.createHash(hash).update(D).update(I).digest();
    for (let r = 1; r < iterations; r++) A = crypto.createHash(hash).update(A).digest();
    out.push(A);
    produced += A.length;
    if (produced >= n) break;
    const B = new Uint8Array(v);
    for (let i = 0; i < v; i++) B[i] = A[i % A.length]!;
    // I_j = (I_j + B + 1) mod 2^(8v), for every v-byte block of I.
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k]! + B[k]! + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, n);
}

// ---- RC2 (RFC 2268), decryption in CBC mode ----

const PITABLE = Buffer.from(
  'd978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2179a59f587b34f1361456d8d09817d32' +
    'bd8f40eb86b77b0bf09521225c6b4e8254d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb626' +
    '6fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed708e8eade8052eef784aa72ac354d6a2a' +
    '961ad2715a1549744b9fd05e0418a4ecc2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731' +
    '2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a90d38341bab33ffb0bb480c5fb9b1cd2e' +
    'c5f3db47e5a59c770aa62068fe7fc1ad',
  'hex',
);

function rc2KeySchedule(key: Uint8Array, effectiveBits: number): Uint16Array {
  const L = new Uint8Array(128);
  L.set(key);
  const T = key.length;
  for (let i = T; i < 128; i++) L[i] = PITABLE[(L[i - 1]! + L[i - T]!) & 0xff]!;
  const T8 = Math.ceil(effectiveBits / 8);
  const TM = 0xff >> (8 * T8 - effectiveBits);
  L[128 - T8] = PITABLE[L[128 - T8]! & TM]!;
  for (let i = 127 - T8; i >= 0; i--) L[i] = PITABLE[L[i + 1]! ^ L[i + T8]!]!;
  const K = new Uint16Array(64);
  for (let i = 0; i < 64; i++) K[i] = L[2 * i]! | (L[2 * i + 1]! << 8);
  return K;
}

function rc2DecryptBlock(K: Uint16Array, block: Uint8Array): Uint8Array {
  const R = [0, 1, 2, 3].map((i) => block[2 * i]! | (block[2 * i + 1]! << 8));
  const S = [1, 2, 3, 5];
  let j = 63;
  const rmix = () => {
    for (let i = 3; i >= 0; i--) {
      const r = R[i]!;
      const rotated = ((r >>> S[i]!) | (r << (16 - S[i]!))) & 0xffff;
      R[i] = (rotated - K[j--]! - (R[(i + 3) & 3]! & R[(i + 2) & 3]!) - (~R[(i + 3) & 3]! & R[(i + 1) & 3]!)) & 0xffff;
    }
  };
  const rmash = () => {
    for (let i = 3; i >= 0; i--) R[i] = (R[i]! - K[R[(i + 3) & 3]! & 63]!) & 0xffff;
  };
  for (let r = 0; r < 5; r++) rmix();
  rmash();
  for (let r = 0; r < 6; r++) rmix();
  rmash();
  for (let r = 0; r < 5; r++) rmix();
  const out = new Uint8Array(8);
  for (let i = 0; i < 4; i++) {
    out[2 * i] = R[i]! & 0xff;
    out[2 * i + 1] = R[i]! >> 8;
  }
  return out;
}

function rc2CbcDecrypt(key: Uint8Array, effectiveBits: number, iv: Uint8Array, data: Uint8Array): Uint8Array {
  if (data.length === 0 || data.length % 8 !== 0) throw new Pkcs12Error('PKCS#12: bad RC2 ciphertext length');
  const K = rc2KeySchedule(key, effectiveBits);
  const out = new Uint8Array(data.length);
  let prev = iv;
  for (let o = 0; o < data.length; o += 8) {
    const c = data.subarray(o, o + 8);
    const p = rc2DecryptBlock(K, c);
    for (let i = 0; i < 8; i++) out[o + i] = p[i]! ^ prev[i]!;
    prev = c;
  }
  const pad = out[out.length - 1]!;
  if (pad < 1 || pad > 8) throw new Pkcs12Error('PKCS#12: wrong password or corrupt data');
  for (let i = out.length - pad; i < out.length; i++) {
    if (out[i] !== pad) throw new Pkcs12Error('PKCS#12: wrong password or corrupt data');
  }
  return out.subarray(0, out.length - pad);
}

// ---- decryption of an AlgorithmIdentifier + ciphertext ----

function decrypt(algorithm: Node, ciphertext: Uint8Array, password: string): Uint8Array {
  const [algOid, params] = kids(algorithm, 'encryption algorithm');
  const alg = oid(algOid, 'encryption algorithm');
  const pbe = PKCS12_PBE[alg];
  try {
    if (pbe) {
      const [saltNode, iterNode] = kids(params, 'PBE parameters');
      const salt = octets(saltNode, 'PBE salt');
      const iterations = int(iterNode, 'PBE iterations');
      const pw = bmpPassword(password);
      const key = pkcs12Kdf('sha1', 64, pw, salt, 1, iterations, pbe.keyLength);
      const iv = pkcs12Kdf('sha1', 64, pw, salt, 2, iterations, 8);
      if (pbe.cipher === 'rc2') return rc2CbcDecrypt(key, pbe.rc2Bits!, iv, ciphertext);
      const d = crypto.createDecipheriv(pbe.cipher, key, iv);
      return Buffer.concat([d.update(ciphertext), d.final()]);
    }
    if (alg === OID.pbes2) {
      const [kdf, scheme] = kids(params, 'PBES2 parameters');
      const [kdfOid, kdfParams] = kids(kdf, 'PBES2 KDF');
      if (oid(kdfOid, 'PBES2 KDF') !== OID.pbkdf2) throw new Pkcs12Error('PKCS#12: PBES2 key derivation other than PBKDF2');
      const kp = kids(kdfParams, 'PBKDF2 parameters');
      const salt = octets(kp[0], 'PBKDF2 salt');
      const iterations = int(kp[1], 'PBKDF2 iterations');
      let prf = 'sha1';
      for (const extra of kp.slice(2)) {
        if (extra instanceof asn1js.Sequence) {
          const prfOid = oid(kids(extra, 'PBKDF2 prf')[0], 'PBKDF2 prf');
          const name = HMAC_PRF[prfOid];
          if (!name) throw new Pkcs12Error(`PKCS#12: unsupported PBKDF2 PRF ${prfOid}`);
          prf = name;
        }
      }
      const [schemeOid, ivNode] = kids(scheme, 'PBES2 encryption scheme');
      const cipher = PBES2_CIPHERS[oid(schemeOid, 'PBES2 cipher')];
      if (!cipher) throw new Pkcs12Error('PKCS#12: unsupported PBES2 cipher');
      if (iterations > 10_000_000) throw new Pkcs12Error('PKCS#12: unreasonable PBKDF2 iteration count');
      const key = crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, cipher.keyLength, prf);
      const d = crypto.createDecipheriv(cipher.cipher, key, octets(ivNode, 'PBES2 IV'));
      return Buffer.concat([d.update(ciphertext), d.final()]);
    }
  } catch (e) {
    if (e instanceof Pkcs12Error) throw e;
    throw new Pkcs12Error('PKCS#12: wrong password or corrupt data');
  }
  throw new Pkcs12Error(`PKCS#12: unsupported encryption algorithm ${alg}`);
}

function verifyMac(macData: Node, authSafeContent: Uint8Array, password: string): void {
  const [digestInfo, saltNode, iterNode] = kids(macData, 'MacData');
  const [digestAlg, digestNode] = kids(digestInfo, 'MAC DigestInfo');
  const digestOid = oid(kids(digestAlg, 'MAC digest algorithm')[0], 'MAC digest algorithm');
  if (digestOid === '1.2.840.113549.1.5.14') throw new Pkcs12Error('PKCS#12: PBMAC1 integrity is not supported');
  const digest = DIGESTS[digestOid];
  if (!digest) throw new Pkcs12Error(`PKCS#12: unsupported MAC digest ${digestOid}`);
  const salt = octets(saltNode, 'MAC salt');
  const iterations = iterNode ? int(iterNode, 'MAC iterations') : 1;
  if (iterations > 10_000_000) throw new Pkcs12Error('PKCS#12: unreasonable MAC iteration count');
  const expected = octets(digestNode, 'MAC value');
  const hashLength = crypto.createHash(digest.name).digest().length;
  // An empty password is encoded either as the bare NUL terminator or as nothing; accept both.
  const candidates = password === '' ? [bmpPassword(''), new Uint8Array(0)] : [bmpPassword(password)];
  for (const pw of candidates) {
    const key = pkcs12Kdf(digest.name, digest.blockSize, pw, salt, 3, iterations, hashLength);
    const mac = crypto.createHmac(digest.name, key).update(authSafeContent).digest();
    if (mac.length === expected.length && crypto.timingSafeEqual(mac, expected)) return;
  }
  throw new Pkcs12Error('PKCS#12: wrong password (integrity check failed)');
}

interface Bags {
  keys: Array<{ der: Uint8Array; localKeyId?: string }>;
  certs: Array<{ der: Uint8Array; localKeyId?: string }>;
}

function localKeyId(bag: Node[]): string | undefined {
  const attrs = bag[2];
  if (!attrs) return undefined;
  for (const attr of kids(attrs, 'bag attributes')) {
    const [attrOid, values] = kids(attr, 'bag attribute');
    if (oid(attrOid, 'bag attribute') === OID.localKeyId) {
      const first = kids(values, 'localKeyId values')[0];
      return Buffer.from(octets(first, 'localKeyId')).toString('hex');
    }
  }
  return undefined;
}

function readSafeContents(bytes: Uint8Array, password: string, out: Bags, depth = 0): void {
  if (depth > 4) throw new Pkcs12Error('PKCS#12: nested safe contents too deep');
  for (const bagNode of kids(parse(bytes, 'SafeContents'), 'SafeContents')) {
    const bag = kids(bagNode, 'SafeBag');
    const bagId = oid(bag[0], 'SafeBag id');
    const value = explicit0(bag[1], 'SafeBag value');
    const id = localKeyId(bag);
    if (bagId === OID.keyBag) {
      out.keys.push({ der: der(value), localKeyId: id });
    } else if (bagId === OID.shroudedKeyBag) {
      const [alg, enc] = kids(value, 'EncryptedPrivateKeyInfo');
      out.keys.push({ der: decrypt(alg!, octets(enc, 'encrypted key'), password), localKeyId: id });
    } else if (bagId === OID.certBag) {
      const [certType, certValue] = kids(value, 'CertBag');
      if (oid(certType, 'CertBag type') === OID.x509Certificate) {
        out.certs.push({ der: octets(explicit0(certValue, 'CertBag value'), 'certificate'), localKeyId: id });
      }
    } else if (bagId === '1.2.840.113549.1.12.10.1.6') {
      readSafeContents(der(value), password, out, depth + 1);
    }
    // CRL and secret bags are irrelevant to signing.
  }
}

/** Orders the certificates from the signer up, by issuer/subject and signature, as far as they link. */
function orderChain(leafDer: Uint8Array, others: Uint8Array[]): { chain: Uint8Array[]; root?: Uint8Array } {
  const chain = [leafDer];
  const pool = others.map((d) => ({ der: d, cert: new X509Certificate(d) }));
  let current = new X509Certificate(leafDer);
  for (let i = 0; i < 10; i++) {
    if (current.subject === current.issuer) return { chain, root: chain[chain.length - 1] };
    const next = pool.find((p) => p.cert.subject === current.issuer && !chain.includes(p.der));
    if (!next) break;
    chain.push(next.der);
    current = next.cert;
  }
  const top = new X509Certificate(chain[chain.length - 1]!);
  return { chain, root: top.subject === top.issuer && chain.length > 1 ? chain[chain.length - 1] : undefined };
}

export function loadPkcs12(bytes: Uint8Array, password: string): SigningIdentity {
  const pfx = kids(parse(bytes, 'PFX'), 'PFX');
  const authSafe = kids(pfx[1], 'authSafe');
  if (oid(authSafe[0], 'authSafe content type') !== OID.data) {
    throw new Pkcs12Error('PKCS#12: public-key integrity mode is not supported');
  }
  const authSafeContent = octets(explicit0(authSafe[1], 'authSafe'), 'authSafe content');
  if (pfx[2]) verifyMac(pfx[2], authSafeContent, password);

  const bags: Bags = { keys: [], certs: [] };
  for (const ci of kids(parse(authSafeContent, 'AuthenticatedSafe'), 'AuthenticatedSafe')) {
    const [typeNode, tagged] = kids(ci, 'ContentInfo');
    const type = oid(typeNode, 'ContentInfo type');
    const content = explicit0(tagged, 'ContentInfo');
    if (type === OID.data) {
      readSafeContents(octets(content, 'SafeContents data'), password, bags);
    } else if (type === OID.encryptedData) {
      const encryptedContentInfo = kids(content, 'EncryptedData')[1];
      const [, alg, encrypted] = kids(encryptedContentInfo, 'EncryptedContentInfo');
      readSafeContents(decrypt(alg!, octets(encrypted, 'encrypted content'), password), password, bags);
    } else {
      throw new Pkcs12Error(`PKCS#12: unsupported content type ${type}`);
    }
  }
  if (bags.keys.length === 0) throw new Pkcs12Error('PKCS#12: no private key found');
  if (bags.certs.length === 0) throw new Pkcs12Error('PKCS#12: no certificate found');

  const keyEntry = bags.keys[0]!;
  let privateKey: KeyObject;
  try {
    privateKey = crypto.createPrivateKey({ key: Buffer.from(keyEntry.der), format: 'der', type: 'pkcs8' });
  } catch {
    throw new Pkcs12Error('PKCS#12: the private key cannot be read (wrong password?)');
  }
  const publicDer = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const leaf =
    bags.certs.find((c) => keyEntry.localKeyId !== undefined && c.localKeyId === keyEntry.localKeyId) ??
    bags.certs.find((c) => new X509Certificate(c.der).publicKey.export({ format: 'der', type: 'spki' }).equals(publicDer));
  if (!leaf) throw new Pkcs12Error('PKCS#12: no certificate matches the private key');
  const { chain, root } = orderChain(
    leaf.der,
    bags.certs.filter((c) => c !== leaf).map((c) => c.der),
  );
  return identityFromParts(privateKey, chain, root);
}
