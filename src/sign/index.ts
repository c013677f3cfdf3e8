/**
 * The sign capability (docs/api.md § Sign): the service's signing identity, and PAdES signing of PDF/DOCX input
 * with audit-trail pages and an embedded audit-trail.json, applied as an incremental update.
 */
export {
  loadSigningIdentity,
  describeIdentity,
  describeSigningKey,
  certificateFingerprint,
  distinguishedName,
  type PublicKeyInfo,
} from './identity.js';
export { loadPkcs12, Pkcs12Error } from './p12.js';
export {
  signDocument,
  resolveLevel,
  type ResolvedLevel,
  type SignEvent,
  type SignRequest,
  type SignResult,
  type SignDependencies,
} from './engine.js';
export { signInputKind } from './input-kind.js';
export { type SignatureLevel } from './ltv.js';
export { CA_PATHS } from './identity.js';
export { answerOcspRequest, buildCrl, type CertificateAuthority } from './ca.js';
export { AUDIT_TRAIL_FILE_NAME, type AuditRecord, type AuditEvent, type Signer } from './audit-trail.js';
export { warmUpAuditFonts } from './audit-page.js';
