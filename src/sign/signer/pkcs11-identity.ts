/**
 * The signing identity of a key in a PKCS#11 token: SIGNING_CERT_CHAIN gives the certificates, the key host
 * thread opens SIGNING_PKCS11_MODULE, logs in as SIGNING_PKCS11_URI says and proves with a test signature that
 * the certificate is the token key's. Nothing is read from or written to DATA_DIR and nothing is generated.
 */
import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config/index.js';
import { readCertificateChain, toPem } from '../cert-chain.js';
import type { SigningIdentity } from '../identity-types.js';
import { UnsupportedKeyError, algorithmFor } from './algorithm.js';
import { KeyHost } from './key-host.js';
import { parsePkcs11Uri } from './pkcs11-uri.js';
import type { Pkcs11KeyOptions } from './pkcs11-key.js';

export async function loadPkcs11Identity(config: Config, logger: Logger): Promise<SigningIdentity> {
  const modulePath = config.signingPkcs11Module!;
  // The settings' readers made sure both are set with the module (src/sign/module.ts).
  const uri = config.signingPkcs11Uri!;
  const { chainDer, rootDer } = readCertificateChain(config.signingCertChain!, 'SIGNING_CERT_CHAIN');
  const cert = new X509Certificate(chainDer[0]!);
  if (Date.parse(cert.validTo) < Date.now())
    throw new ConfigError('SIGNING_CERT_CHAIN', `holds a signer certificate that expired on ${new Date(cert.validTo).toISOString()}`);
  let algorithm;
  try {
    algorithm = algorithmFor(cert.publicKey, config.signingRsaPadding);
  } catch (e) {
    if (e instanceof UnsupportedKeyError)
      throw new ConfigError('SIGNING_PKCS11_URI', `names a key Folio cannot sign with: SIGNING_CERT_CHAIN certifies ${e.message}`);
    throw e;
  }
  const keyName = parsePkcs11Uri(uri).display;
  const options: Pkcs11KeyOptions = {
    modulePath,
    uri,
    algorithm,
    // As many signatures at once as engine threads can ask for, and one for the main thread (the CLI).
    sessions: Math.max(2, config.engineWorkers + 1),
  };
  const keyHost = await KeyHost.start({
    spec: { adapter: 'pkcs11', options },
    keyName,
    certificateDer: chainDer[0]!,
    algorithm,
    unavailableVariable: 'SIGNING_PKCS11_MODULE',
    certificateVariable: 'SIGNING_CERT_CHAIN',
    logger,
  });
  logger.info({ key: keyName, signer: cert.subject.split('\n').join(', ') }, 'signing with a key in a PKCS#11 token');
  return {
    signer: keyHost.signer,
    publicKey: cert.publicKey,
    keyAlgorithm: algorithm.scheme === 'ECDSA' ? 'ECDSA' : 'RSA',
    chainDer,
    certificatePem: toPem(chainDer[0]!, 'CERTIFICATE'),
    ...(rootDer ? { rootCertificatePem: toPem(rootDer, 'CERTIFICATE') } : {}),
    keyHost,
  };
}
