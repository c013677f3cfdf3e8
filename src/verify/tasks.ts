/** Verify's engine task (run on engine threads, src/engines/worker.ts): signature validation with revocation checking. */
import type { TaskHandlers } from '../engines/tasks.js';
import { loadTrustStore, RevocationFetcher, verifyPdfWithRevocation, type TrustSources, type TrustStore, type VerifyResult } from './index.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    'verify.pdf': {
      input: { bytes: Uint8Array };
      output: VerifyResult;
    };
  }
  interface EngineWorkerData {
    /** What verify trusts (src/verify/module.ts `workerData`): the service's own root and certificate, TRUST_ANCHORS. */
    trust?: TrustSources;
  }
}

// Rebuilt once per thread from workerData (a trust store and a fetcher do not cross threads).
let trust: TrustStore | undefined;
let revocationFetcher: RevocationFetcher | undefined;

export const handlers = {
  'verify.pdf': ({ bytes }, { data }) => {
    trust ??= loadTrustStore(data.trust ?? {});
    // Revocation data is fetched online only from URL_FETCH_ALLOWLIST hosts (10 s at most per document).
    revocationFetcher ??= new RevocationFetcher({ allowlist: data.urlFetchAllowlist });
    return verifyPdfWithRevocation(bytes, { trust }, revocationFetcher);
  },
} satisfies TaskHandlers<'verify.pdf'>;
