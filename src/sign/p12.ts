/**
 * PKCS#12 (RFC 7292) reader for SIGNING_P12: verifies the password MAC, decrypts the bags and returns the
 * private key with its certificate chain. The structure is parsed with @peculiar/asn1-pfx, asn1-pkcs8 and
 * asn1-cms (Folio's one ASN.1 idiom, src/crypto/asn1.ts); the ciphers, PBKDF2 and HMAC are node:crypto.
 * Handles what `openssl pkcs12 -export` writes today (PBES2 with PBKDF2 + AES-CBC, HMAC-SHA-256 MAC) and with
 * `-legacy` (pbeWithSHAAnd3-KeyTripleDES-CBC keys, pbeWithSHAAnd40BitRC2-CBC certificates, HMAC-SHA-1 MAC),
 * which older OpenSSL and Windows exports still produce.
 *
 * Why the PKCS#12 key derivation (RFC 7292 appendix B) and RC2 (RFC 2268, decryption only) are written here,
 * measured on this stack (Node 20, OpenSSL 3.0): pkijs 4.0.0 knows no PKCS#12 v1 PBE algorithm (no
 * 1.2.840.113549.1.12.1.* in its source, only PBES2): on an `openssl pkcs12 -export -legacy` file it checks the
 * MAC and then fails with `Unknown "contentEncryptionAlgorithm": 1.2.840.113549.1.12.1.6`; and
 * `crypto.createDecipheriv('rc2-40-cbc', …)` fails with ERR_OSSL_EVP_UNSUPPORTED (RC2 lives in OpenSSL 3's
 * legacy provider, which Node does not load; `crypto.getCiphers()` lists no rc2). test/sign/p12.test.ts
 * asserts both facts, so the day either changes the test says so.
 */
import crypto, { type KeyObject, X509Certificate } from 'node:crypto';
import { ContentInfo, EncryptedContentInfo } from '@peculiar/asn1-cms';
import {
  AuthenticatedSafe,
  CertBag,
  PFX,
  SafeContents,
  type SafeBag,
  id_SafeContents,
  id_certBag,
  id_keyBag,
  id_pkcs8ShroudedKeyBag,
  id_x509Certificate,
} from '@peculiar/asn1-pfx';
import { EncryptedPrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import type { SigningIdentity } from './identity-types.js';
import { OID as CMS_OID, parseAs } from '../crypto/asn1.js';
import { octetStringContents } from '../crypto/der.js';
import { identityFromParts, type FileKeyOptions } from './identity.js';

const OID = {
  data: CMS_OID.data,
  encryptedData: CMS_OID.encryptedData,
  localKeyId: '1.2.840.113549.1.9.21',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
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

// ---- the parameter schemas the @peculiar family does not ship (RFC 7292 appendix C, RFC 8018 A.2/A.4) ----

/** pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER } */
class Pkcs12PbeParams {
  salt = new OctetString();
  iterations = 0;
}
AsnProp({ type: OctetString })(Pkcs12PbeParams.prototype, 'salt');
AsnProp({ type: AsnPropTypes.Integer })(Pkcs12PbeParams.prototype, 'iterations');
AsnType({ type: AsnTypeTypes.Sequence })(Pkcs12PbeParams);

/** PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier, encryptionScheme AlgorithmIdentifier } */
class Pbes2Params {
  keyDerivationFunc = new AlgorithmIdentifier();
  encryptionScheme = new AlgorithmIdentifier();
}
AsnProp({ type: AlgorithmIdentifier })(Pbes2Params.prototype, 'keyDerivationFunc');
AsnProp({ type: AlgorithmIdentifier })(Pbes2Params.prototype, 'encryptionScheme');
AsnType({ type: AsnTypeTypes.Sequence })(Pbes2Params);

/** PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount, keyLength OPTIONAL, prf DEFAULT hmacWithSHA1 } */
class Pbkdf2Params {
  salt = new OctetString();
  iterationCount = 0;
  keyLength?: number;
  prf?: AlgorithmIdentifier;
}
AsnProp({ type: OctetString })(Pbkdf2Params.prototype, 'salt');
AsnProp({ type: AsnPropTypes.Integer })(Pbkdf2Params.prototype, 'iterationCount');
AsnProp({ type: AsnPropTypes.Integer, optional: true })(Pbkdf2Params.prototype, 'keyLength');
AsnProp({ type: AlgorithmIdentifier, optional: true })(Pbkdf2Params.prototype, 'prf');
AsnType({ type: AsnTypeTypes.Sequence })(Pbkdf2Params);

/** EncryptedData ::= SEQUENCE { version, encryptedContentInfo, [1] unprotectedAttrs OPTIONAL } (RFC 5652 §8) */
class EncryptedData {
  version = 0;
  encryptedContentInfo = new EncryptedContentInfo();
  unprotectedAttrs?: ArrayBuffer;
}
AsnProp({ type: AsnPropTypes.Integer })(EncryptedData.prototype, 'version');
AsnProp({ type: EncryptedContentInfo })(EncryptedData.prototype, 'encryptedContentInfo');
AsnProp({ type: AsnPropTypes.Any, context: 1, implicit: true, optional: true })(EncryptedData.prototype, 'unprotectedAttrs');
AsnType({ type: AsnTypeTypes.Sequence })(EncryptedData);

/** Parses `bytes` as `type`, failing with the domain error that names `what`. */
const parse = <T>(bytes: Uint8Array | ArrayBuffer, type: new () => T, what: string): T =>
  parseAs(bytes, type, () => new Pkcs12Error(`PKCS#12: cannot parse ${what}`));

/** Content octets of an OCTET STRING element given raw (an ANY field: primitive or BER-constructed). */
function octets(raw: ArrayBuffer | undefined, what: string): Uint8Array {
  const out = raw && octetStringContents(new Uint8Array(raw));
  if (!out) throw new Pkcs12Error(`PKCS#12: ${what} is not an octet string`);
  return out;
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

const MAX_ITERATIONS = 10_000_000;

function decrypt(algorithm: AlgorithmIdentifier, ciphertext: Uint8Array, password: string): Uint8Array {
  const alg = algorithm.algorithm;
  const pbe = PKCS12_PBE[alg];
  if (!pbe && alg !== OID.pbes2) throw new Pkcs12Error(`PKCS#12: unsupported encryption algorithm ${alg}`);
  if (!algorithm.parameters) throw new Pkcs12Error('PKCS#12: encryption parameters are missing');
  try {
    if (pbe) {
      const params = parse(algorithm.parameters, Pkcs12PbeParams, 'PBE parameters');
      const salt = new Uint8Array(params.salt.buffer);
      if (params.iterations > MAX_ITERATIONS) throw new Pkcs12Error('PKCS#12: unreasonable PBE iteration count');
      const pw = bmpPassword(password);
      const key = pkcs12Kdf('sha1', 64, pw, salt, 1, params.iterations, pbe.keyLength);
      const iv = pkcs12Kdf('sha1', 64, pw, salt, 2, params.iterations, 8);
      if (pbe.cipher === 'rc2') return rc2CbcDecrypt(key, pbe.rc2Bits!, iv, ciphertext);
      const d = crypto.createDecipheriv(pbe.cipher, key, iv);
      return Buffer.concat([d.update(ciphertext), d.final()]);
    }
    const params = parse(algorithm.parameters, Pbes2Params, 'PBES2 parameters');
    if (params.keyDerivationFunc.algorithm !== OID.pbkdf2) throw new Pkcs12Error('PKCS#12: PBES2 key derivation other than PBKDF2');
    if (!params.keyDerivationFunc.parameters) throw new Pkcs12Error('PKCS#12: PBKDF2 parameters are missing');
    const kdf = parse(params.keyDerivationFunc.parameters, Pbkdf2Params, 'PBKDF2 parameters');
    let prf = 'sha1';
    if (kdf.prf) {
      const name = HMAC_PRF[kdf.prf.algorithm];
      if (!name) throw new Pkcs12Error(`PKCS#12: unsupported PBKDF2 PRF ${kdf.prf.algorithm}`);
      prf = name;
    }
    const cipher = PBES2_CIPHERS[params.encryptionScheme.algorithm];
    if (!cipher) throw new Pkcs12Error('PKCS#12: unsupported PBES2 cipher');
    if (!params.encryptionScheme.parameters) throw new Pkcs12Error('PKCS#12: PBES2 IV is missing');
    const iv = new Uint8Array(parse(params.encryptionScheme.parameters, OctetString, 'PBES2 IV').buffer);
    if (kdf.iterationCount > MAX_ITERATIONS) throw new Pkcs12Error('PKCS#12: unreasonable PBKDF2 iteration count');
    const key = crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), new Uint8Array(kdf.salt.buffer), kdf.iterationCount, cipher.keyLength, prf);
    const d = crypto.createDecipheriv(cipher.cipher, key, iv);
    return Buffer.concat([d.update(ciphertext), d.final()]);
  } catch (e) {
    if (e instanceof Pkcs12Error) throw e;
    throw new Pkcs12Error('PKCS#12: wrong password or corrupt data');
  }
}

function verifyMac(pfx: PFX, authSafeContent: Uint8Array, password: string): void {
  const { mac, macSalt, iterations } = pfx.macData;
  const digestOid = mac.digestAlgorithm.algorithm;
  if (digestOid === OID.pbmac1) throw new Pkcs12Error('PKCS#12: PBMAC1 integrity is not supported');
  const digest = DIGESTS[digestOid];
  if (!digest) throw new Pkcs12Error(`PKCS#12: unsupported MAC digest ${digestOid}`);
  if (iterations > MAX_ITERATIONS) throw new Pkcs12Error('PKCS#12: unreasonable MAC iteration count');
  const salt = new Uint8Array(macSalt.buffer);
  const expected = Buffer.from(mac.digest.buffer);
  const hashLength = crypto.createHash(digest.name).digest().length;
  // An empty password is encoded either as the bare NUL terminator or as nothing; accept both.
  const candidates = password === '' ? [bmpPassword(''), new Uint8Array(0)] : [bmpPassword(password)];
  for (const pw of candidates) {
    const key = pkcs12Kdf(digest.name, digest.blockSize, pw, salt, 3, iterations, hashLength);
    const computed = crypto.createHmac(digest.name, key).update(authSafeContent).digest();
    if (computed.length === expected.length && crypto.timingSafeEqual(computed, expected)) return;
  }
  throw new Pkcs12Error('PKCS#12: wrong password (integrity check failed)');
}

interface Bags {
  keys: Array<{ der: Uint8Array; localKeyId?: string }>;
  certs: Array<{ der: Uint8Array; localKeyId?: string }>;
}

function localKeyId(bag: SafeBag): string | undefined {
  const value = bag.bagAttributes?.find((a) => a.attrId === OID.localKeyId)?.attrValues[0];
  return value && Buffer.from(octets(value, 'localKeyId')).toString('hex');
}

function readSafeContents(bytes: Uint8Array | ArrayBuffer, password: string, out: Bags, depth = 0): void {
  if (depth > 4) throw new Pkcs12Error('PKCS#12: nested safe contents too deep');
  for (const bag of parse(bytes, SafeContents, 'SafeContents')) {
    const id = localKeyId(bag);
    if (bag.bagId === id_keyBag) {
      out.keys.push({ der: new Uint8Array(bag.bagValue), localKeyId: id });
    } else if (bag.bagId === id_pkcs8ShroudedKeyBag) {
      const info = parse(bag.bagValue, EncryptedPrivateKeyInfo, 'EncryptedPrivateKeyInfo');
      out.keys.push({ der: decrypt(info.encryptionAlgorithm, new Uint8Array(info.encryptedData.buffer), password), localKeyId: id });
    } else if (bag.bagId === id_certBag) {
      const certBag = parse(bag.bagValue, CertBag, 'CertBag');
      if (certBag.certId === id_x509Certificate) out.certs.push({ der: octets(certBag.certValue, 'certificate'), localKeyId: id });
    } else if (bag.bagId === id_SafeContents) {
      readSafeContents(bag.bagValue, password, out, depth + 1);
    }
    // CRL and secret bags are irrelevant to signing.
  }
}

/** The ciphertext of an EncryptedContentInfo, primitive or in constructed pieces. */
function encryptedContentOf(info: EncryptedContentInfo): Uint8Array {
  const c = info.encryptedContent;
  if (c?.value) return new Uint8Array(c.value.buffer);
  if (c?.constructedValue) return new Uint8Array(Buffer.concat(c.constructedValue.map((p) => new Uint8Array(p.buffer))));
  throw new Pkcs12Error('PKCS#12: encrypted content is missing');
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

export function loadPkcs12(bytes: Uint8Array, password: string, options: FileKeyOptions = {}): SigningIdentity {
  const pfx = parse(bytes, PFX, 'PFX');
  if (pfx.authSafe.contentType !== OID.data) throw new Pkcs12Error('PKCS#12: public-key integrity mode is not supported');
  const authSafeContent = octets(pfx.authSafe.content, 'authSafe content');
  // asn1-pfx fills an absent MacData with an empty one: only a real one (with a digest) is checked.
  if (pfx.macData?.mac.digest.buffer.byteLength) verifyMac(pfx, authSafeContent, password);

  const bags: Bags = { keys: [], certs: [] };
  for (const ci of parse(authSafeContent, AuthenticatedSafe, 'AuthenticatedSafe') as ContentInfo[]) {
    if (ci.contentType === OID.data) {
      readSafeContents(octets(ci.content, 'SafeContents data'), password, bags);
    } else if (ci.contentType === OID.encryptedData) {
      const info = parse(ci.content, EncryptedData, 'EncryptedData').encryptedContentInfo;
      readSafeContents(decrypt(info.contentEncryptionAlgorithm, encryptedContentOf(info), password), password, bags);
    } else {
      throw new Pkcs12Error(`PKCS#12: unsupported content type ${ci.contentType}`);
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
  return identityFromParts(privateKey, chain, root, { keyName: 'pkcs12', ...options });
}
