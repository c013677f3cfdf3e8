/**
 * Certificate chains given as PEM files (SIGNING_CERT_CHAIN, SIGNING_PREVIOUS_CERT_CHAIN): the signer's
 * certificate first, then each certificate's issuer. Read once at start-up; a file that cannot be used stops
 * it with one line naming the setting.
 */
import fs from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../config/index.js';
import type { PreviousIdentity } from './identity-types.js';

export function toPem(der: Uint8Array, label: string): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export interface CertificateChain {
  chainDer: Uint8Array[];
  /** The last certificate when it is a self-signed CA above the signer: what verify trusts. */
  rootDer?: Uint8Array;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export function readCertificateChain(file: string, variable: string): CertificateChain {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(variable, `names ${file}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new ConfigError(variable, `names ${file}, which holds no PEM certificate`);
  let certs: X509Certificate[];
  try {
    certs = blocks.map((b) => new X509Certificate(b));
  } catch (e) {
    throw new ConfigError(variable, `names ${file}, whose certificates cannot be read (${(e as Error).message})`);
  }
  // Each certificate must be issued (and signed) by the next: the order CMS and the DSS carry it in.
  for (let i = 0; i + 1 < certs.length; i++) {
    const [cert, issuer] = [certs[i]!, certs[i + 1]!];
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) {
      throw new ConfigError(
        variable,
        `names ${file}, whose certificate ${i + 2} did not issue certificate ${i + 1}: put the signer first, then each issuer`,
      );
    }
  }
  const chainDer = certs.map((c) => new Uint8Array(c.raw));
  const top = certs[certs.length - 1]!;
  const selfSigned = top.checkIssued(top) && top.verify(top.publicKey);
  return { chainDer, ...(selfSigned && certs.length > 1 ? { rootDer: chainDer[chainDer.length - 1] } : {}) };
}

/** The identities of before a rotation, one chain file each. */
export function readPreviousIdentities(files: readonly string[], variable: string): PreviousIdentity[] {
  return files.map((file) => {
    const { chainDer, rootDer } = readCertificateChain(file, variable);
    return {
      chainDer,
      certificatePem: toPem(chainDer[0]!, 'CERTIFICATE'),
      ...(rootDer ? { rootCertificatePem: toPem(rootDer, 'CERTIFICATE') } : {}),
    };
  });
}
