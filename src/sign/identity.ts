/**
 * The service's signing identity (docs/api.md § Sign): a key in a PKCS#11 token (SIGNING_PKCS11_MODULE, _URI and
 * SIGNING_CERT_CHAIN: nothing private touches DATA_DIR, `signer/pkcs11-identity.ts`), else loaded from
 * SIGNING_P12 (+ SIGNING_P12_PASSWORD), else generated once into DATA_DIR/signing/ — a local root CA and a
 * signing certificate issued by it — and reused on every later start, so that documents signed before a
 * restart still verify as "issued by this service". SIGNING_PREVIOUS_CERT_CHAIN adds the identities of
 * before a rotation, published and trusted but never signed with.
 *
 * The certificates are built with @peculiar/asn1-x509, Folio's one ASN.1 idiom (src/crypto/asn1.ts), and
 * signed with node:crypto. @peculiar/x509 2.2.0 was tried and not kept: importing it throws "tsyringe requires
 * a reflect polyfill" unless the process first loads `reflect-metadata`, a global patch of `Reflect` (and one
 * more dependency) for what is here one TBSCertificate and one signature.
 */
import crypto, { type KeyObject, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { parseAs } from '../crypto/asn1.js';
import {
  AccessDescription,
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AuthorityInfoAccessSyntax,
  AttributeValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  CRLDistributionPoints,
  DistributionPoint,
  DistributionPointName,
  Extension,
  Extensions,
  GeneralName,
  KeyIdentifier,
  KeyUsage,
  KeyUsageFlags,
  Name,
  RelativeDistinguishedName,
  SubjectKeyIdentifier,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
  id_ad_caIssuers,
  id_ad_ocsp,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_cRLDistributionPoints,
  id_ce_keyUsage,
  id_ce_subjectKeyIdentifier,
  id_pe_authorityInfoAccess,
} from '@peculiar/asn1-x509';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/index.js';
import type { SigningIdentity } from './identity-types.js';
import { loadPkcs12 } from './p12.js';
import { readPreviousIdentities, toPem } from './cert-chain.js';
import { FileKeySigner } from './signer/file-key.js';
import { UnsupportedKeyError, algorithmFor, describeAlgorithm, type RsaPadding } from './signer/algorithm.js';

const ROOT_CERT = 'root-ca.pem';
const ROOT_KEY = 'root-ca.key.pem';
const SIGNER_CERT = 'signer.pem';
const SIGNER_KEY = 'signer.key.pem';

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

export { toPem };

/** Where Folio's generated CA publishes its certificate, CRL and OCSP responder (no API key needed). */
export const CA_PATHS = { certificate: '/v1/sign/ca/certificate', crl: '/v1/sign/ca/crl', ocsp: '/v1/sign/ca/ocsp' } as const;

export interface FileKeyOptions {
  /** Where the key came from, for logs and errors (never the key). */
  keyName?: string;
  rsaPadding?: RsaPadding;
}

/** Builds a file key's identity from its parts; shared by the generated and the P12 paths. */
export function identityFromParts(privateKey: KeyObject, chainDer: Uint8Array[], rootDer?: Uint8Array, o: FileKeyOptions = {}): SigningIdentity {
  if (chainDer.length === 0) throw new Error('signing identity has no certificate');
  const cert = new X509Certificate(chainDer[0]!);
  let signer: FileKeySigner;
  try {
    signer = new FileKeySigner(privateKey, o.keyName ?? 'file', undefined, o.rsaPadding);
  } catch (e) {
    if (e instanceof UnsupportedKeyError) throw new Error(`the signing key is ${e.message}`);
    throw e;
  }
  // The certificate must belong to the key.
  if (!cert.checkPrivateKey(privateKey)) throw new Error('the signing certificate does not match the private key');

  return {
    signer,
    publicKey: cert.publicKey,
    keyAlgorithm: signer.algorithm.scheme === 'ECDSA' ? 'ECDSA' : 'RSA',
    chainDer,
    certificatePem: toPem(chainDer[0]!, 'CERTIFICATE'),
    rootCertificatePem: rootDer ? toPem(rootDer, 'CERTIFICATE') : undefined,
  };
}

function writePrivate(file: string, content: string): void {
  fs.writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  fs.chmodSync(file, 0o600);
}

function name(commonName: string): Name {
  const rdn = (type: string, value: string) =>
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) })]);
  // CN first, so that the name reads "CN=…, O=Folio" in the order Node (and /v1/verify) prints it.
  return new Name([rdn('2.5.4.3', commonName), rdn('2.5.4.10', 'Folio')]);
}

function keyIdentifier(spki: SubjectPublicKeyInfo): Uint8Array {
  // RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits.
  return crypto.createHash('sha1').update(new Uint8Array(spki.subjectPublicKey)).digest();
}

function extension(extnID: string, critical: boolean, value: unknown): Extension {
  return new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

interface IssueParams {
  subject: Name;
  issuer: Name;
  subjectKey: KeyObject;
  issuerKey: KeyObject;
  issuerSpki: SubjectPublicKeyInfo;
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  /** The API's public base URL: the certificate then names the CA's CRL and OCSP responder under it. */
  publicUrl?: string;
}

/** CRL Distribution Points and Authority Information Access (OCSP, CA issuers) under the public URL. */
function revocationPointers(publicUrl: string): Extension[] {
  const uri = (path: string) => new GeneralName({ uniformResourceIdentifier: `${publicUrl}${path}` });
  return [
    extension(
      id_ce_cRLDistributionPoints,
      false,
      new CRLDistributionPoints([new DistributionPoint({ distributionPoint: new DistributionPointName({ fullName: [uri(CA_PATHS.crl)] }) })]),
    ),
    extension(
      id_pe_authorityInfoAccess,
      false,
      new AuthorityInfoAccessSyntax([
        new AccessDescription({ accessMethod: id_ad_ocsp, accessLocation: uri(CA_PATHS.ocsp) }),
        new AccessDescription({ accessMethod: id_ad_caIssuers, accessLocation: uri(CA_PATHS.certificate) }),
      ]),
    ),
  ];
}

const spkiError = (m: string) => new Error(`node:crypto exported an unreadable public key: ${m}`);

/** Issues an X.509 v3 certificate signed with ECDSA P-256 / SHA-256. */
function issueCertificate(p: IssueParams): Uint8Array {
  const spki = parseAs(crypto.createPublicKey(p.subjectKey).export({ format: 'der', type: 'spki' }), SubjectPublicKeyInfo, spkiError);
  const serial = crypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and non-zero
  const sigAlg = new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 });
  const keyUsage = p.ca ? KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign : KeyUsageFlags.digitalSignature | KeyUsageFlags.nonRepudiation; // PAdES / pyHanko expect non-repudiation
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial.buffer.slice(serial.byteOffset, serial.byteOffset + serial.length),
    signature: sigAlg,
    issuer: p.issuer,
    validity: new Validity({ notBefore: p.notBefore, notAfter: p.notAfter }),
    subject: p.subject,
    subjectPublicKeyInfo: spki,
    extensions: new Extensions([
      extension(id_ce_basicConstraints, true, new BasicConstraints(p.ca ? { cA: true, pathLenConstraint: 0 } : { cA: false })),
      extension(id_ce_keyUsage, true, new KeyUsage(keyUsage)),
      extension(id_ce_subjectKeyIdentifier, false, new SubjectKeyIdentifier(keyIdentifier(spki))),
      extension(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(keyIdentifier(p.issuerSpki)) })),
      ...(p.publicUrl && !p.ca ? revocationPointers(p.publicUrl) : []),
    ]),
  });
  const tbsDer = new Uint8Array(AsnConvert.serialize(tbs));
  const signature = crypto.sign('sha256', tbsDer, { key: p.issuerKey, dsaEncoding: 'der' });
  const cert = new Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: sigAlg,
    signatureValue: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.length),
  });
  return new Uint8Array(AsnConvert.serialize(cert));
}

async function generateIdentityFiles(dir: string, publicUrl?: string): Promise<void> {
  const now = Date.now();
  const notBefore = new Date(now - 5 * 60_000); // tolerate small clock skew of verifiers
  const rootKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const signerKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const installation = crypto.randomBytes(4).toString('hex');
  const rootName = name(`Folio Local Root CA ${installation}`);
  const rootSpki = parseAs(crypto.createPublicKey(rootKey).export({ format: 'der', type: 'spki' }), SubjectPublicKeyInfo, spkiError);

  const rootDer = issueCertificate({
    subject: rootName,
    issuer: rootName,
    subjectKey: rootKey,
    issuerKey: rootKey,
    issuerSpki: rootSpki,
    notBefore,
    notAfter: new Date(now + 25 * 365 * 86_400_000),
    ca: true,
  });
  const signerDer = issueCertificate({
    subject: name(`Folio Document Signing ${installation}`),
    issuer: rootName,
    subjectKey: signerKey,
    issuerKey: rootKey,
    issuerSpki: rootSpki,
    notBefore,
    notAfter: new Date(now + 10 * 365 * 86_400_000),
    ca: false,
    publicUrl,
  });
  const pkcs8 = (k: KeyObject) => k.export({ format: 'pem', type: 'pkcs8' }).toString();

  // Write into a private temporary folder and rename it into place, so two processes starting on the same
  // DATA_DIR never see half an identity; the loser of the rename race uses the winner's files.
  const tmp = `${dir}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.mkdirSync(tmp, { mode: 0o700 });
  try {
    writePrivate(path.join(tmp, ROOT_CERT), toPem(rootDer, 'CERTIFICATE'));
    writePrivate(path.join(tmp, ROOT_KEY), pkcs8(rootKey));
    writePrivate(path.join(tmp, SIGNER_CERT), toPem(signerDer, 'CERTIFICATE'));
    writePrivate(path.join(tmp, SIGNER_KEY), pkcs8(signerKey));
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      if (!fs.existsSync(path.join(dir, SIGNER_KEY))) throw e;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function loadIdentityFiles(dir: string): SigningIdentity {
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');
  const privateKey = crypto.createPrivateKey(read(SIGNER_KEY));
  const signerDer = new Uint8Array(new X509Certificate(read(SIGNER_CERT)).raw);
  const rootDer = new Uint8Array(new X509Certificate(read(ROOT_CERT)).raw);
  // The root key signs the CA's CRL and OCSP answers (src/sign/ca.ts).
  const ca = { privateKey: crypto.createPrivateKey(read(ROOT_KEY)), certificateDer: rootDer };
  return { ...identityFromParts(privateKey, [signerDer, rootDer], rootDer, { keyName: `file:${path.join(dir, SIGNER_KEY)}` }), ca };
}

/** Reads SIGNING_P12 as a file path, or else as the base64 of the PKCS#12 bytes. */
function readP12Source(value: string): Uint8Array {
  if (fs.existsSync(value)) return new Uint8Array(fs.readFileSync(value));
  const compact = value.replace(/\s+/g, '');
  if (compact.length > 64 && /^[A-Za-z0-9+/]+=*$/.test(compact)) return new Uint8Array(Buffer.from(compact, 'base64'));
  throw new Error('it is neither a readable file nor base64 PKCS#12 data');
}

export async function loadSigningIdentity(config: Config, logger: Logger): Promise<SigningIdentity> {
  // Read first: a rotation's earlier chains that cannot be read stop start-up before any key is touched.
  const previous = readPreviousIdentities(config.signingPreviousCertChain, 'SIGNING_PREVIOUS_CERT_CHAIN');
  const identity = await loadCurrentIdentity(config, logger);
  if (previous.length === 0) return identity;
  logger.info({ previous: previous.map((p) => new X509Certificate(p.chainDer[0]!).subject) }, 'publishing and trusting earlier signing certificates');
  return { ...identity, previous };
}

async function loadCurrentIdentity(config: Config, logger: Logger): Promise<SigningIdentity> {
  if (config.signingPkcs11Module) {
    // The key stays in the token: nothing private is read from or written to DATA_DIR, nothing is generated.
    const { loadPkcs11Identity } = await import('./signer/pkcs11-identity.js');
    return loadPkcs11Identity(config, logger);
  }
  if (config.signingP12) {
    let identity: SigningIdentity;
    try {
      identity = loadPkcs12(readP12Source(config.signingP12), config.signingP12Password ?? '', {
        keyName: 'SIGNING_P12',
        rsaPadding: config.signingRsaPadding,
      });
    } catch (e) {
      // Start-up stops with one line naming the variable, like every other configuration error.
      throw new ConfigError('SIGNING_P12', `cannot be used: ${(e as Error).message}`);
    }
    logger.info({ signer: new X509Certificate(identity.chainDer[0]!).subject }, 'signing identity loaded from SIGNING_P12');
    return identity;
  }
  const dir = path.join(config.dataDir, 'signing');
  if (!fs.existsSync(path.join(dir, SIGNER_KEY))) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    await generateIdentityFiles(dir, config.publicUrl);
    logger.info({ dir }, 'generated a local root CA and signing certificate');
  }
  try {
    return loadIdentityFiles(dir);
  } catch (e) {
    throw new ConfigError(
      'DATA_DIR',
      `holds an unreadable signing identity in ${dir} (${(e as Error).message}); restore it or remove the folder to generate a new one`,
    );
  }
}

/** The public description served by GET /v1/verify/key. */
export interface PublicKeyInfo {
  algorithm: string;
  certificate: string;
  publicKey: string;
  fingerprint: string;
  validFrom: string;
  validTo: string;
  issuer: string;
  subject: string;
}

export function colonHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase().match(/../g)!.join(':');
}

export function certificateFingerprint(der: Uint8Array): string {
  return colonHex(crypto.createHash('sha256').update(der).digest());
}

/** Descriptions already made: every signature's audit record names the key, and parsing the certificate each time cost ~0.7 ms. */
const described = new WeakMap<SigningIdentity, PublicKeyInfo>();

export function describeIdentity(identity: SigningIdentity): PublicKeyInfo {
  let info = described.get(identity);
  if (!info) {
    info = { ...describeCertificate(identity.chainDer[0]!), algorithm: describeAlgorithm(identity.signer.algorithm) };
    described.set(identity, info);
  }
  // A copy: callers may add to what they are given.
  return { ...info };
}

/** A certificate as GET /v1/verify/key describes it; `algorithm` is what its key signs with (RSA: PKCS#1 v1.5 unless the certificate says PSS). */
function describeCertificate(der: Uint8Array): PublicKeyInfo {
  const cert = new X509Certificate(der);
  let algorithm: string;
  try {
    algorithm = describeAlgorithm(algorithmFor(cert.publicKey));
  } catch (e) {
    algorithm = e instanceof UnsupportedKeyError ? 'unsupported' : 'unknown';
  }
  return {
    algorithm,
    certificate: toPem(der, 'CERTIFICATE'),
    publicKey: cert.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    fingerprint: certificateFingerprint(der),
    validFrom: new Date(cert.validFrom).toISOString(),
    validTo: new Date(cert.validTo).toISOString(),
    issuer: distinguishedName(cert.issuer),
    subject: distinguishedName(cert.subject),
  };
}

/**
 * GET /v1/verify/key: the current certificate where clients have always read it, and during a rotation window
 * (SIGNING_PREVIOUS_CERT_CHAIN) the earlier ones under `previous`, newest first as configured.
 */
export function describeSigningKey(identity: SigningIdentity): PublicKeyInfo & { previous?: PublicKeyInfo[] } {
  const current = describeIdentity(identity);
  if (!identity.previous?.length) return current;
  return { ...current, previous: identity.previous.map((p) => describeCertificate(p.chainDer[0]!)) };
}

/** Node prints names one attribute per line, in certificate order; joined as /v1/verify reports them. */
export function distinguishedName(nodeName: string): string {
  return nodeName.split('\n').filter(Boolean).join(', ');
}
