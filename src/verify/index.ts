/**
 * The verify capability (CONTRACT §6): a forensic PDF signature validator. Public surface: verifyPdf and
 * the trust-store helpers; everything under pdf/ is the byte-level reader it is built on.
 */
export { verifyPdf, type VerifyResult, type SignatureReport, type VerifyOptions } from './verify.js';
export { loadTrustStore, certificatesFromPem, type TrustStore } from './certificates.js';
export { openPdf, PdfDocument } from './pdf/reader.js';
