/**
 * The file key on the signer interface: the generated identity's key (DATA_DIR/signing) or SIGNING_P12's, as a
 * node:crypto KeyObject. node:crypto signs bytes, not digests (it has no pre-hashed ECDSA or RSA-PSS), so this
 * signer takes `tbs.data` and hashes it with the algorithm's digest; the signature is the same one a token
 * would make over `tbs.digest`.
 */
import crypto, { type KeyObject } from 'node:crypto';
import { algorithmFor, type RsaPadding } from './algorithm.js';
import { NODE_DIGEST, type Signature, type SignatureAlgorithm, type SignerThreadData, type ThreadableSigner, type ToBeSigned } from './types.js';

export class FileKeySigner implements ThreadableSigner {
  readonly algorithm: SignatureAlgorithm;

  constructor(
    readonly privateKey: KeyObject,
    readonly keyName: string,
    algorithm?: SignatureAlgorithm,
    rsaPadding: RsaPadding = 'pkcs1',
  ) {
    this.algorithm = algorithm ?? algorithmFor(privateKey, rsaPadding);
  }

  sign(tbs: ToBeSigned): Promise<Signature> {
    if (!tbs.data) return Promise.reject(new Error('the file key signs the data, not a bare digest (node:crypto has no pre-hashed ECDSA)'));
    const a = this.algorithm;
    const key = this.privateKey;
    const options =
      a.scheme === 'ECDSA'
        ? { key, dsaEncoding: 'der' as const }
        : a.scheme === 'RSASSA-PSS'
          ? { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: a.saltLength }
          : { key, padding: crypto.constants.RSA_PKCS1_PADDING };
    return Promise.resolve({ signature: new Uint8Array(crypto.sign(NODE_DIGEST[a.hash], tbs.data, options)), algorithm: a });
  }

  threadData(): SignerThreadData {
    return {
      kind: 'file',
      keyName: this.keyName,
      algorithm: this.algorithm,
      privateKeyPem: this.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
  }
}
