/**
 * Revocation for Folio's own generated CA (the root in DATA_DIR/signing that issued the signing certificate):
 * a CRL signed by the root and RFC 6960 OCSP responses signed by the root itself (the CA is its own
 * responder, so no delegated responder certificate is needed). Both are served without a key at
 * /v1/sign/ca/crl and /v1/sign/ca/ocsp, and made in-process for the DSS of a B-LT signature.
 *
 * The CA revokes nothing today (it issues one signing certificate per installation; a compromised one is
 * replaced by generating a new identity), so the CRL lists no entries and the OCSP status of a certificate
 * this CA issued is `good`. A serial it does not know gets `unknown`, another issuer `unauthorized`.
 * Structures are built with @peculiar/asn1-x509 / asn1-ocsp (Folio's one ASN.1 idiom) and signed with
 * node:crypto, as the certificates in identity.ts are.
 */
import crypto, { type KeyObject } from 'node:crypto';
import { OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AuthorityKeyIdentifier,
  Certificate,
  CertificateList,
  CRLNumber,
  Extension,
  KeyIdentifier,
  TBSCertList,
  Time,
  Version,
  id_ce_authorityKeyIdentifier,
  id_ce_cRLNumber,
} from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertID,
  CertStatus,
  KeyHash,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  SingleResponse,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
} from '@peculiar/asn1-ocsp';
import { OID, parseAs, serialize, toArrayBuffer } from '../crypto/asn1.js';
import { certificateFields } from '../crypto/der.js';

/** The generated CA's key and certificate (absent for a SIGNING_P12 identity). */
export interface CertificateAuthority {
  privateKey: KeyObject;
  certificateDer: Uint8Array;
}

/** How long a CRL or an OCSP answer may be relied on before a fresher one is expected. */
const VALIDITY_MS = 7 * 86_400_000;
/** An OCSP request carries one CertID per certificate asked about; real clients ask about one. */
const MAX_OCSP_REQUESTS = 16;
export const MAX_OCSP_REQUEST_BYTES = 16 * 1024;

const HASHES: Record<string, string> = {
  [OID.sha1]: 'sha1',
  [OID.sha256]: 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

const sigAlg = () => new AlgorithmIdentifier({ algorithm: OID.ecdsaWithSHA256 });

function sign(ca: CertificateAuthority, tbs: Uint8Array): ArrayBuffer {
  const key = ca.privateKey;
  const sig = crypto.sign('sha256', tbs, key.asymmetricKeyType === 'ec' ? { key, dsaEncoding: 'der' } : key);
  return toArrayBuffer(sig);
}

/** The bits of the CA's subjectPublicKey (what OCSP's issuerKeyHash and the key identifier hash). */
function caKeyBits(ca: CertificateAuthority): Uint8Array {
  const cert = parseAs(ca.certificateDer, Certificate, (m) => new Error(`CA certificate: ${m}`));
  return new Uint8Array(cert.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
}

function caSubject(ca: CertificateAuthority) {
  return parseAs(ca.certificateDer, Certificate, (m) => new Error(`CA certificate: ${m}`)).tbsCertificate.subject;
}

/** The CA's CRL (DER): no entries, valid for a week, CRL number from the clock (monotonic without state). */
export function buildCrl(ca: CertificateAuthority, now = new Date()): Uint8Array {
  const thisUpdate = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const tbs = new TBSCertList({
    version: Version.v2,
    signature: sigAlg(),
    issuer: caSubject(ca),
    thisUpdate: new Time(thisUpdate),
    nextUpdate: new Time(new Date(thisUpdate.getTime() + VALIDITY_MS)),
    crlExtensions: [
      new Extension({
        extnID: id_ce_authorityKeyIdentifier,
        critical: false,
        extnValue: new OctetString(
          serialize(new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(crypto.createHash('sha1').update(caKeyBits(ca)).digest()) })),
        ),
      }),
      new Extension({
        extnID: id_ce_cRLNumber,
        critical: false,
        extnValue: new OctetString(serialize(new CRLNumber(Math.floor(thisUpdate.getTime() / 1000)))),
      }),
    ],
  });
  const tbsDer = serialize(tbs);
  return serialize(new CertificateList({ tbsCertList: tbs, signatureAlgorithm: sigAlg(), signature: sign(ca, tbsDer) }));
}

/** Big-endian magnitude without leading zero bytes, so two encodings of one serial compare equal. */
function magnitude(b: Uint8Array): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return Buffer.from(b.subarray(i));
}

/** The CertID (SHA-1, as RFC 5019 clients send it) of `certDer`, issued by `issuerDer`. */
export function certIdOf(certDer: Uint8Array, issuerDer: Uint8Array): CertID {
  const fields = certificateFields(certDer);
  if (!fields) throw new Error('the certificate could not be read');
  const issuer = parseAs(issuerDer, Certificate, (m) => new Error(`issuer certificate: ${m}`));
  const sha1 = (b: Uint8Array) => crypto.createHash('sha1').update(b).digest();
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: OID.sha1, parameters: null }),
    issuerNameHash: new OctetString(sha1(fields.issuer)),
    issuerKeyHash: new OctetString(sha1(new Uint8Array(issuer.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey))),
    serialNumber: toArrayBuffer(fields.serial),
  });
}

type Status = 'good' | 'unknown';

function singleResponse(certID: CertID, status: Status, now: Date): SingleResponse {
  return new SingleResponse({
    certID,
    certStatus: new CertStatus(status === 'good' ? { good: null } : { unknown: null }),
    thisUpdate: now,
    nextUpdate: new Date(now.getTime() + VALIDITY_MS),
  });
}

function basicResponse(ca: CertificateAuthority, responses: SingleResponse[], now: Date, nonce?: Extension): Uint8Array {
  const data = new ResponseData({
    responderID: new ResponderID({ byKey: new KeyHash(crypto.createHash('sha1').update(caKeyBits(ca)).digest()) }),
    producedAt: now,
    responses,
    ...(nonce ? { responseExtensions: [nonce] } : {}),
  });
  const basic = new BasicOCSPResponse({ tbsResponseData: data, signatureAlgorithm: sigAlg(), signature: sign(ca, serialize(data)) });
  return serialize(
    new OCSPResponse({
      responseStatus: OCSPResponseStatus.successful,
      responseBytes: new ResponseBytes({ responseType: id_pkix_ocsp_basic, response: new OctetString(serialize(basic)) }),
    }),
  );
}

const errorResponse = (status: OCSPResponseStatus) => serialize(new OCSPResponse({ responseStatus: status }));

/** Whole seconds: GeneralizedTime without fractions is what every client parses. */
const seconds = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

/** The OCSP response (DER) saying `certDer` (issued by this CA) is good, for the DSS of a B-LT signature. */
export function ocspResponseFor(ca: CertificateAuthority, certDer: Uint8Array, now = new Date()): Uint8Array {
  const t = seconds(now);
  return basicResponse(ca, [singleResponse(certIdOf(certDer, ca.certificateDer), 'good', t)], t);
}

/**
 * Answers an OCSP request (DER) as the CA's responder. `issued` are the certificates this CA issued and
 * vouches for. A request that does not parse is `malformedRequest`; one about another issuer is
 * `unauthorized` (RFC 5019 §2.2.3); a request's nonce is echoed.
 */
export function answerOcspRequest(ca: CertificateAuthority, issued: Uint8Array[], requestDer: Uint8Array, now = new Date()): Uint8Array {
  if (requestDer.length > MAX_OCSP_REQUEST_BYTES) return errorResponse(OCSPResponseStatus.malformedRequest);
  let request: OCSPRequest;
  try {
    request = parseAs(requestDer, OCSPRequest, (m) => new Error(m));
  } catch {
    return errorResponse(OCSPResponseStatus.malformedRequest);
  }
  const list = request.tbsRequest.requestList;
  if (list.length === 0 || list.length > MAX_OCSP_REQUESTS) return errorResponse(OCSPResponseStatus.malformedRequest);
  const keyBits = caKeyBits(ca);
  // Self-signed: the root's issuer field is its subject, byte for byte as it signed it.
  const caName = certificateFields(ca.certificateDer)?.issuer ?? serialize(caSubject(ca));
  const serials = new Set(issued.map((c) => magnitude(certificateFields(c)?.serial ?? new Uint8Array()).toString('hex')));
  const t = seconds(now);
  const responses: SingleResponse[] = [];
  for (const { reqCert } of list) {
    const hash = HASHES[reqCert.hashAlgorithm.algorithm];
    if (!hash) return errorResponse(OCSPResponseStatus.unauthorized);
    const digest = (b: Uint8Array) => crypto.createHash(hash).update(b).digest();
    const ours =
      Buffer.from(reqCert.issuerNameHash.buffer).equals(digest(caName)) && Buffer.from(reqCert.issuerKeyHash.buffer).equals(digest(keyBits));
    if (!ours) return errorResponse(OCSPResponseStatus.unauthorized);
    const known = serials.has(magnitude(new Uint8Array(reqCert.serialNumber)).toString('hex'));
    responses.push(singleResponse(reqCert, known ? 'good' : 'unknown', t));
  }
  const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === id_pkix_ocsp_nonce);
  return basicResponse(ca, responses, t, nonce && new Extension({ extnID: id_pkix_ocsp_nonce, critical: false, extnValue: nonce.extnValue }));
}
