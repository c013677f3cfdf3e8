/**
 * Sign's engine task (run on engine threads, src/engines/worker.ts): seals a PDF. The signer, which cannot
 * cross threads, is rebuilt here once from workerData (src/sign/module.ts `workerData`): a file key from its
 * PEM, a token's key as a channel to the key host thread (the key itself never reaches this thread).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { wholeBuffer, type TaskFile, type TaskHandlers } from '../engines/tasks.js';
import { SafeFetcher } from '../fetch/safe-fetch.js';
import { signDocument, warmUpAuditFonts, type SignRequest } from './index.js';
import type { SerializedSigningIdentity, SigningIdentity } from './identity-types.js';
import { signerFromThreadData } from './signer/index.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    /**
     * Seals a PDF. A DOCX is converted by the office engine on the way in (its supervised processes), so the
     * worker receives the original bytes for the audit record and the PDF made from them. The request is the
     * sign engine's own, checked and parsed where it came in (dates as Dates: they survive structured clone).
     */
    'sign.seal': {
      input: SignRequest;
      output: { pdf: Uint8Array; timestampSkipped?: string };
    };
  }
  interface EngineWorkerData {
    /** The signing identity (src/sign/module.ts `workerData`); absent: this instance does not sign. */
    signing?: SerializedSigningIdentity;
    tsaUrl?: string;
    tsaOptional?: boolean;
  }
}

// Parsing the audit-page fonts takes most of a second: done with the module (before the first job is
// announced, src/engines/worker.ts), not in the first signature.
warmUpAuditFonts();

let identity: SigningIdentity | undefined;
/** Revocation data for B-LT/B-LTA and the TSA go through one SSRF-safe fetcher per thread (URL_FETCH_ALLOWLIST). */
let fetcher: SafeFetcher | undefined;

export function identityFrom(s: SerializedSigningIdentity): SigningIdentity {
  return {
    signer: signerFromThreadData(s.signer),
    publicKey: new X509Certificate(s.chainDer[0]!).publicKey,
    keyAlgorithm: s.keyAlgorithm,
    chainDer: s.chainDer,
    certificatePem: s.certificatePem,
    rootCertificatePem: s.rootCertificatePem,
    ...(s.ca ? { ca: { privateKey: createPrivateKey(s.ca.privateKeyPem), certificateDer: s.ca.certificateDer } } : {}),
  };
}

export const handlers = {
  'sign.seal': async (input, { data }) => {
    if (!data.signing) throw new Error('the engine worker has no signing identity');
    identity ??= identityFrom(data.signing);
    fetcher ??= new SafeFetcher({ allowlist: data.urlFetchAllowlist });
    // The request is the engine's own, checked where it came in (a DOCX already converted: input.pdfOfDocx).
    let timestampSkipped: string | undefined;
    const result = await signDocument(input, {
      identity,
      fetcher,
      urlFetchAllowlist: data.urlFetchAllowlist,
      tsaUrl: data.tsaUrl,
      tsaOptional: data.tsaOptional ?? false,
      onTimestampSkipped: (reason) => {
        timestampSkipped = reason;
      },
    });
    return { pdf: result.pdf, ...(timestampSkipped !== undefined ? { timestampSkipped } : {}) };
  },
} satisfies TaskHandlers<'sign.seal'>;

/** The signed PDF is a buffer of its own (the input plus the appended updates): moved back, not copied. */
export const transfer: TaskFile<'sign.seal'>['transfer'] = {
  'sign.seal': ({ pdf }) => wholeBuffer(pdf),
};
