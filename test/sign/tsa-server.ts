/**
 * A tiny RFC 3161 time-stamp authority over HTTP, in the test process: parses the TimeStampReq, answers a
 * TimeStampResp whose token is a CMS SignedData over a TSTInfo, signed by a TSA certificate (extended key
 * usage timeStamping) that OpenSSL issues from a throwaway root. Modes let tests make it fail.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import {
  Attribute,
  CertificateChoices,
  CertificateSet,
  ContentInfo,
  EncapsulatedContent,
  EncapsulatedContentInfo,
  IssuerAndSerialNumber,
  SignedData,
  SignerIdentifier,
  SignerInfo,
  SignerInfos,
  DigestAlgorithmIdentifiers,
  id_signedData,
} from '@peculiar/asn1-cms';
import { PKIStatus, PKIStatusInfo, TimeStampReq, TimeStampResp, TSTInfo, TSTInfoVersion, id_ct_tstInfo } from '@peculiar/asn1-tsp';
import * as asn1js from 'asn1js';

export type TsaMode = 'ok' | 'http-500' | 'rejection' | 'wrong-nonce';

export interface TestTsa {
  url: string;
  rootPem: string;
  tsaCertPem: string;
  mode: TsaMode;
  requests: number;
  close(): Promise<void>;
}

const SHA256 = '2.16.840.1.101.3.4.2.1';
const toAb = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

function issueTsaCertificate(dir: string): { rootPem: string; certPem: string; keyPem: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'tsa-root.key',
    '-out',
    'tsa-root.pem',
    '-subj',
    '/CN=Test TSA Root',
    '-days',
    '30',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', '/CN=Test TSA']);
  fs.writeFileSync(path.join(dir, 'tsa.ext'), 'extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature\n');
  run([
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'tsa-root.pem',
    '-CAkey',
    'tsa-root.key',
    '-CAcreateserial',
    '-out',
    'tsa.pem',
    '-days',
    '30',
    '-extfile',
    'tsa.ext',
  ]);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  return { rootPem: read('tsa-root.pem'), certPem: read('tsa.pem'), keyPem: read('tsa.key') };
}

function attribute(oid: string, valueDer: ArrayBuffer): Attribute {
  return new Attribute({ attrType: oid, attrValues: [valueDer] });
}

function buildToken(req: TimeStampReq, certDer: Uint8Array, key: crypto.KeyObject, serial: number, mode: TsaMode): ContentInfo {
  const nonce = mode === 'wrong-nonce' ? toAb(crypto.randomBytes(8)) : req.nonce;
  const tstInfo = new TSTInfo({
    version: TSTInfoVersion.v1,
    policy: '1.3.6.1.4.1.99999.1',
    messageImprint: req.messageImprint,
    serialNumber: toAb(Uint8Array.from([serial & 0x7f])),
    genTime: new Date(Math.floor(Date.now() / 1000) * 1000),
    ordering: false,
    nonce,
  });
  const tstDer = new Uint8Array(AsnConvert.serialize(tstInfo));
  const cert = AsnConvert.parse(certDer, Certificate);

  // ESS signing-certificate-v2 (RFC 5816) with the default SHA-256, built by hand (no ESS schema here).
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: toAb(crypto.createHash('sha256').update(certDer).digest()) })],
  });
  const signingCertV2 = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
  const attrs = [
    attribute('1.2.840.113549.1.9.3', new asn1js.ObjectIdentifier({ value: id_ct_tstInfo }).toBER(false)),
    attribute('1.2.840.113549.1.9.4', AsnConvert.serialize(new OctetString(crypto.createHash('sha256').update(tstDer).digest()))),
    attribute('1.2.840.113549.1.9.16.2.47', signingCertV2.toBER(false)),
  ];
  // DER SET OF: sorted by encoding, in the signature and in the SignerInfo alike.
  const encoded = attrs.map((a) => ({ a, der: Buffer.from(AsnConvert.serialize(a)) })).sort((x, y) => Buffer.compare(x.der, y.der));
  const setDer = Buffer.from(new asn1js.Set({ value: encoded.map((e) => asn1js.fromBER(e.der).result) }).toBER(false));
  const signature = crypto.sign('sha256', setDer, { key, dsaEncoding: 'der' });

  const signedData = new SignedData({
    version: 3,
    digestAlgorithms: new DigestAlgorithmIdentifiers([new AlgorithmIdentifier({ algorithm: SHA256 })]),
    encapContentInfo: new EncapsulatedContentInfo({
      eContentType: id_ct_tstInfo,
      eContent: new EncapsulatedContent({ single: new OctetString(tstDer) }),
    }),
    certificates: new CertificateSet([new CertificateChoices({ certificate: cert })]),
    signerInfos: new SignerInfos([
      new SignerInfo({
        version: 1,
        sid: new SignerIdentifier({
          issuerAndSerialNumber: new IssuerAndSerialNumber({ issuer: cert.tbsCertificate.issuer, serialNumber: cert.tbsCertificate.serialNumber }),
        }),
        digestAlgorithm: new AlgorithmIdentifier({ algorithm: SHA256 }),
        signedAttrs: encoded.map((e) => e.a),
        signatureAlgorithm: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.2' }),
        signature: new OctetString(signature),
      }),
    ]),
  });
  return new ContentInfo({ contentType: id_signedData, content: AsnConvert.serialize(signedData) });
}

export async function startTestTsa(dir: string): Promise<TestTsa> {
  const { rootPem, certPem, keyPem } = issueTsaCertificate(dir);
  const certDer = new Uint8Array(new crypto.X509Certificate(certPem).raw);
  const key = crypto.createPrivateKey(keyPem);
  const sockets = new Set<import('node:net').Socket>();
  const state = { mode: 'ok' as TsaMode, requests: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests++;
      if (state.mode === 'http-500' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(500).end('tsa down');
        return;
      }
      try {
        const tsReq = AsnConvert.parse(Buffer.concat(chunks), TimeStampReq);
        const resp =
          state.mode === 'rejection'
            ? new TimeStampResp({ status: new PKIStatusInfo({ status: PKIStatus.rejection }) })
            : new TimeStampResp({
                status: new PKIStatusInfo({ status: PKIStatus.granted }),
                timeStampToken: buildToken(tsReq, certDer, key, state.requests, state.mode),
              });
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from(AsnConvert.serialize(resp)));
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    rootPem,
    tsaCertPem: certPem,
    get mode() {
      return state.mode;
    },
    set mode(m: TsaMode) {
      state.mode = m;
    },
    get requests() {
      return state.requests;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  } as TestTsa;
}
