/**
 * Long-term-validation fixtures for verify: leaves issued by the test root with any key type and with CRL
 * distribution point / OCSP URLs, CRLs and OCSP responses signed with node:crypto (their ASN.1 built with
 * @peculiar/asn1-x509 / asn1-ocsp, independently of src/), and a DSS appended as an incremental update.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openPdf } from '../../src/verify/index.js';
import { isRef } from '../../src/pdf/index.js';
import { appendUpdate, caSigns, nextObjectNumber, serialize, type TestPki, type Signer, type UpdateObject } from './fixtures.js';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate, CertificateList, RevokedCertificate, TBSCertList, Time } from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertID,
  CertStatus,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
  KeyHash,
} from '@peculiar/asn1-ocsp';

/** A leaf issued by the test root for a key made with `openssl genpkey -algorithm <alg>` (extra extension lines optional). */
export function issueLeaf(p: TestPki, name: string, algorithm: string, subject: string, extraExt = ''): Signer {
  const ext = `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n${extraExt}`;
  return { ...issueUnder(p, name, subject, 'ca', ext, algorithm), chainPem: [p.caPem] };
}

/** A certificate issued by the CA `<ca>.pem`/`<ca>.key` in the PKI's folder for a new `<algorithm>` key, with the given extension lines (a CA or a leaf). */
export function issueUnder(
  p: TestPki,
  name: string,
  subject: string,
  ca: string,
  ext: string,
  algorithm = 'RSA',
): { certPem: string; keyPem: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: p.dir, stdio: 'pipe' });
  fs.writeFileSync(path.join(p.dir, `${name}.ext`), ext);
  const keyOptions = algorithm === 'RSA' ? ['-pkeyopt', 'rsa_keygen_bits:2048'] : algorithm === 'EC' ? ['-pkeyopt', 'ec_paramgen_curve:P-256'] : [];
  run(['genpkey', '-algorithm', algorithm, ...keyOptions, '-out', `${name}.key`]);
  run(['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  return caSigns(p.dir, name, ca, `${name}.ext`);
}

export interface DssContent {
  certs?: Uint8Array[];
  crls?: Uint8Array[];
  ocsps?: Uint8Array[];
  /** VRI entries keyed by the signature whose /Contents they serve (its CMS bytes). */
  vri?: Array<{ signatureCms: Uint8Array; certs?: Uint8Array[]; crls?: Uint8Array[]; ocsps?: Uint8Array[] }>;
  /** Extra objects written in the same update (e.g. a sneaked page change). */
  extra?: UpdateObject[];
  /** Extra entries for the DSS dictionary itself (raw PDF syntax). */
  dssExtra?: string;
}

/**
 * Appends a Document Security Store (ISO 32000-2 §12.8.4.3) as one incremental update: every certificate,
 * CRL and OCSP response as its own stream, /Certs /CRLs /OCSPs arrays, /VRI keyed by the upper-case hex SHA-1
 * of each signature's /Contents, and the catalog's /DSS (an existing DSS's arrays are replaced by the union).
 */
export function appendDss(pdf: Uint8Array, content: DssContent): Uint8Array {
  const doc = openPdf(pdf);
  const last = doc.last;
  const rootRef = doc.trailerAt(last)!.map.get('Root');
  if (!isRef(rootRef)) throw new Error('no root ref');
  const catalog = doc.catalogAt(last)!;
  let n = nextObjectNumber(pdf);
  const objects: UpdateObject[] = [];
  const stream = (bytes: Uint8Array) => {
    const num = n++;
    objects.push({
      num,
      body: Buffer.concat([Buffer.from(`<</Length ${bytes.length}>>\nstream\n`), Buffer.from(bytes), Buffer.from('\nendstream')]),
    });
    return `${num} 0 R`;
  };
  const arr = (list?: Uint8Array[]) => (list?.length ? `[${list.map(stream).join(' ')}]` : undefined);
  const entries: string[] = [];
  const certs = arr(content.certs);
  const crls = arr(content.crls);
  const ocsps = arr(content.ocsps);
  if (certs) entries.push(`/Certs ${certs}`);
  if (crls) entries.push(`/CRLs ${crls}`);
  if (ocsps) entries.push(`/OCSPs ${ocsps}`);
  if (content.vri?.length) {
    const vri = content.vri.map((v) => {
      const key = crypto.createHash('sha1').update(v.signatureCms).digest('hex').toUpperCase();
      const parts = [
        v.certs?.length ? `/Cert ${arr(v.certs)}` : '',
        v.crls?.length ? `/CRL ${arr(v.crls)}` : '',
        v.ocsps?.length ? `/OCSP ${arr(v.ocsps)}` : '',
      ];
      const num = n++;
      objects.push({ num, body: `<<${parts.join(' ')}>>` });
      return `/${key} ${num} 0 R`;
    });
    entries.push(`/VRI <<${vri.join(' ')}>>`);
  }
  const dssNum = n++;
  objects.push({ num: dssNum, body: `<</Type /DSS ${entries.join(' ')}${content.dssExtra ?? ''}>>` });
  const newCatalog = new Map(catalog.map);
  newCatalog.set('DSS', { kind: 'ref', num: dssNum, gen: 0 });
  objects.push({ num: rootRef.num, body: serialize({ kind: 'dict', map: newCatalog, start: 0, end: 0 }) });
  objects.push(...(content.extra ?? []));
  return appendUpdate(pdf, objects);
}

/** The CMS bytes of each signature of a PDF, in file order (for VRI keys). */
export function signatureContents(pdf: Uint8Array): Uint8Array[] {
  const text = Buffer.from(pdf).toString('latin1');
  const out: Uint8Array[] = [];
  const re = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = Number(m[2]);
    const end = Number(m[3]);
    if (end <= start) continue;
    // Cut at the DER length of the outer SEQUENCE, not at the trailing zeros: a CMS may itself end in 0x00
    // (about 1 signature in 256), and stripping zeros would then key the VRI by a truncated value.
    const padded = Buffer.from(text.slice(start + 1, end - 1), 'hex');
    out.push(new Uint8Array(padded.subarray(0, derEnd(padded))));
  }
  return out;
}

/** End of the DER element at the start of `b` (definite lengths, as every CMS here is written). */
function derEnd(b: Uint8Array): number {
  const first = b[1] ?? 0;
  if (first < 0x80) return 2 + first;
  let len = 0;
  for (let i = 0; i < (first & 0x7f); i++) len = len * 256 + (b[2 + i] ?? 0);
  return 2 + (first & 0x7f) + len;
}

const toAb = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
const der = (pem: string) => new Uint8Array(new crypto.X509Certificate(pem).raw);
export const certDer = der;
const parsedCert = (pem: string) => AsnConvert.parse(toAb(der(pem)), Certificate);

/** The algorithm and signature for `data` by a PEM private key (RSA: sha256WithRSAEncryption; EC: ecdsa-with-SHA256). */
function signWith(keyPem: string, data: Uint8Array): { alg: AlgorithmIdentifier; sig: Buffer } {
  const key = crypto.createPrivateKey(keyPem);
  if (key.asymmetricKeyType === 'ec')
    return { alg: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.2' }), sig: crypto.sign('sha256', data, { key, dsaEncoding: 'der' }) };
  return { alg: new AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null }), sig: crypto.sign('sha256', data, key) };
}

export interface CrlOptions {
  /** Certificates (PEM) listed as revoked, with their revocation time. */
  revoked?: Array<{ certPem: string; at: Date }>;
  thisUpdate?: Date;
  nextUpdate?: Date;
  /** Sign with this key instead of the issuer's (a forged CRL). */
  signingKeyPem?: string;
}

/** A CRL (RFC 5280 CertificateList v2) issued in the name of `issuer`. */
export function makeCrl(issuer: { certPem: string; keyPem: string }, o: CrlOptions = {}): Uint8Array {
  const thisUpdate = o.thisUpdate ?? new Date(Date.now() - 60_000);
  const algProbe = signWith(o.signingKeyPem ?? issuer.keyPem, new Uint8Array(1)).alg;
  const tbs = new TBSCertList({
    version: 1,
    signature: algProbe,
    issuer: parsedCert(issuer.certPem).tbsCertificate.subject,
    thisUpdate: new Time(thisUpdate),
    nextUpdate: new Time(o.nextUpdate ?? new Date(thisUpdate.getTime() + 7 * 86400_000)),
    ...(o.revoked?.length
      ? {
          revokedCertificates: o.revoked.map(
            (r) => new RevokedCertificate({ userCertificate: parsedCert(r.certPem).tbsCertificate.serialNumber, revocationDate: new Time(r.at) }),
          ),
        }
      : {}),
  });
  const tbsDer = new Uint8Array(AsnConvert.serialize(tbs));
  const { alg, sig } = signWith(o.signingKeyPem ?? issuer.keyPem, tbsDer);
  return new Uint8Array(AsnConvert.serialize(new CertificateList({ tbsCertList: tbs, signatureAlgorithm: alg, signature: toAb(sig) })));
}

export interface OcspOptions {
  status: 'good' | 'revoked' | 'unknown';
  revokedAt?: Date;
  thisUpdate?: Date;
  nextUpdate?: Date;
  producedAt?: Date;
  /** Signer of the response (default: the issuing CA); its certificate is embedded when it is not the CA. */
  responder?: { certPem: string; keyPem: string };
}

/** An OCSPResponse (successful, basic) about `cert` issued by `issuer` (RFC 6960), CertID with SHA-1. */
export function makeOcsp(cert: string, issuer: { certPem: string; keyPem: string }, o: OcspOptions): Uint8Array {
  const ca = parsedCert(issuer.certPem);
  const issuerName = new Uint8Array(AsnConvert.serialize(ca.tbsCertificate.subject));
  const keyBits = new Uint8Array(ca.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  const sha1 = (b: Uint8Array) => toAb(crypto.createHash('sha1').update(b).digest());
  const thisUpdate = o.thisUpdate ?? new Date(Date.now() - 60_000);
  const certStatus =
    o.status === 'good'
      ? new CertStatus({ good: null })
      : o.status === 'revoked'
        ? new CertStatus({ revoked: new RevokedInfo({ revocationTime: o.revokedAt ?? thisUpdate }) })
        : new CertStatus({ unknown: null });
  const responder = o.responder ?? issuer;
  const responderKey = new Uint8Array(parsedCert(responder.certPem).tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  const data = new ResponseData({
    responderID: new ResponderID({ byKey: new KeyHash(sha1(responderKey)) }),
    producedAt: o.producedAt ?? new Date(),
    responses: [
      new SingleResponse({
        certID: new CertID({
          hashAlgorithm: new AlgorithmIdentifier({ algorithm: '1.3.14.3.2.26', parameters: null }),
          issuerNameHash: new OctetString(sha1(issuerName)),
          issuerKeyHash: new OctetString(sha1(keyBits)),
          serialNumber: parsedCert(cert).tbsCertificate.serialNumber,
        }),
        certStatus,
        thisUpdate,
        nextUpdate: o.nextUpdate ?? new Date(thisUpdate.getTime() + 86400_000),
      }),
    ],
  });
  const tbsDer = new Uint8Array(AsnConvert.serialize(data));
  const { alg, sig } = signWith(responder.keyPem, tbsDer);
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: alg,
    signature: toAb(sig),
    ...(o.responder ? { certs: [parsedCert(o.responder.certPem)] } : {}),
  });
  const basicDer = new Uint8Array(AsnConvert.serialize(basic));
  return new Uint8Array(
    AsnConvert.serialize(
      new OCSPResponse({
        responseStatus: OCSPResponseStatus.successful,
        responseBytes: new ResponseBytes({ responseType: '1.3.6.1.5.5.7.48.1.1', response: new OctetString(toAb(basicDer)) }),
      }),
    ),
  );
}

/** The test root as an issuer (certificate and key). */
export const rootOf = (p: TestPki) => ({ certPem: p.caPem, keyPem: fs.readFileSync(path.join(p.dir, 'ca.key'), 'utf8') });
