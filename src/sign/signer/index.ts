/**
 * Folio's signing keys behind one interface (`types.ts` `Signer`): the file key, PKCS#11 through the key host
 * thread, and the remote-signer interface (`remote-key.ts`) a cloud KMS adapter implements.
 */
import { createPrivateKey } from 'node:crypto';
import { ChannelSigner } from './channel.js';
import { FileKeySigner } from './file-key.js';
import type { SignerThreadData, ThreadableSigner } from './types.js';

export type { DigestName, NamedCurve, Signature, SignatureAlgorithm, Signer, SignerThreadData, ThreadableSigner, ToBeSigned } from './types.js';
export { NODE_DIGEST } from './types.js';
export {
  algorithmFor,
  describeAlgorithm,
  maxSignatureLength,
  signatureAlgorithmIdentifier,
  digestAlgorithmIdentifier,
  UnsupportedKeyError,
} from './algorithm.js';
export { FileKeySigner } from './file-key.js';
export { parsePkcs11Uri, Pkcs11UriError, type Pkcs11Uri } from './pkcs11-uri.js';
export { KeySetupError, KeyUnavailableError, type RemoteKey } from './remote-key.js';

/** The signer an engine thread rebuilds from its workerData: the file key itself, or a channel to the key host. */
export function signerFromThreadData(d: SignerThreadData): ThreadableSigner {
  if (d.kind === 'file') return new FileKeySigner(createPrivateKey(d.privateKeyPem), d.keyName, d.algorithm);
  return new ChannelSigner(d.keyName, d.algorithm, d.channel, d.timeoutMs);
}
