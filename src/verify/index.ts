/**
 * The verify capability (docs/api.md § Verify): a forensic PDF signature validator. Public surface: verifyPdf and
 * the trust-store helpers. The byte-level reader it is built on lives in src/pdf/ (shared with sign) and is
 * re-exported here for existing callers.
 */
export { verifyPdf, type VerifyResult, type SignatureReport, type VerifyOptions } from './verify.js';
export { verifyPdfWithRevocation, RevocationFetcher, type RevocationFetchOptions } from './revocation-fetch.js';
export { loadTrustStore, certificatesFromPem, type TrustStore, type TrustSources } from './certificates.js';
export { openPdf, PdfDocument } from '../pdf/index.js';
