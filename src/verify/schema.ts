/** POST /v1/verify (docs/api.md § Verify): the JSON body (or a multipart `file`) and the report. */
import { DocumentSource, Nullable, StringEnum, Type, type Static } from '../http/schema.js';

const O = Type.Optional;
const LEVEL = ['NONE', 'SIGNATURES_ONLY', 'FORM_FILL', 'ANNOTATIONS', 'METADATA', 'OTHER'] as const;

export const VerifyRequest = Type.Object(
  { document: DocumentSource },
  { additionalProperties: false, examples: [{ document: { url: 'https://example.org/signed.pdf' } }] },
);
export type VerifyRequestBody = Static<typeof VerifyRequest>;

const SignerCertificate = Nullable(
  Type.Object({
    name: O(Nullable(Type.String())),
    email: O(Nullable(Type.String())),
    subject: O(Type.String()),
    issuer: O(Type.String()),
    serialNumber: O(Type.String()),
    notBefore: O(Type.String({ format: 'date-time' })),
    notAfter: O(Type.String({ format: 'date-time' })),
    fingerprint: O(Type.String({ description: 'SHA-256 of the certificate, colon-separated hex' })),
  }),
);

const ModificationDetail = Type.Object({
  object: O(Type.Integer()),
  revision: O(Type.Integer({ description: '1-based revision that made the change' })),
  kind: O(StringEnum(['added', 'changed', 'deleted', 're-pointed', 'emptied', 'structure'] as const)),
  level: O(StringEnum(LEVEL)),
  issue: O(Type.String()),
  attack: O(
    StringEnum(['EVIL_ANNOTATION', 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE'] as const, {
      description:
        'EVIL_ANNOTATION: a visible annotation added after signing; SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE: a signature field drawing an appearance with no signature behind it (the sneaky-signature attack)',
    }),
  ),
  field: O(Type.String()),
  ltaUpdate: O(
    Type.Boolean({
      description:
        'part of a long-term-validation update (DSS/VRI, a document timestamp and its field, metadata bookkeeping): permitted after any signature, a DocMDP P=1 certification included',
    }),
  ),
});

const RevocationSource = Type.Object({
  type: StringEnum(['OCSP', 'CRL'] as const),
  origin: StringEnum(['DSS', 'VRI', 'CMS', 'ONLINE'] as const, {
    description: "DSS: document-level store; VRI: the signature's VRI entry; CMS: inside the signature; ONLINE: fetched from an allow-listed host",
  }),
  issuer: Nullable(Type.String({ description: 'subject of the CRL issuer or OCSP responder whose signature verified' })),
  producedAt: O(Type.String({ format: 'date-time' })),
  thisUpdate: O(Type.String({ format: 'date-time' })),
  nextUpdate: O(Nullable(Type.String({ format: 'date-time' }))),
  valid: Type.Boolean({ description: 'signature, signer authority and validity window check out; only valid sources are used' }),
  status: O(StringEnum(['GOOD', 'REVOKED', 'UNKNOWN'] as const, { description: 'what the source says about the signer certificate' })),
  revokedAt: O(Type.String({ format: 'date-time' })),
  problem: O(Type.String()),
  revision: O(Type.Integer({ description: '1-based revision that added it to the DSS' })),
});

const Revocation = Type.Object(
  {
    status: StringEnum(['GOOD', 'REVOKED', 'UNKNOWN', 'NOT_CHECKED'] as const, {
      description:
        "the signer certificate's status at the signing time: GOOD, REVOKED (before the signing time: not valid; also when a CA certificate of its path was, named in problems), UNKNOWN (data found, none usable or the responder does not know the certificate), NOT_CHECKED (no data, or a self-signed/unchained signer)",
    }),
    checkedAt: O(Type.String({ format: 'date-time', description: 'thisUpdate of the source the status rests on' })),
    revokedAt: O(Type.String({ format: 'date-time' })),
    sources: Type.Array(RevocationSource),
  },
  { description: 'revocation of the signer certificate, from the DSS, the CMS or (allow-listed hosts only) online' },
);

export const SignatureReport = Type.Object({
  type: O(
    StringEnum(['signature', 'timestamp'] as const, { description: 'timestamp: a document timestamp (/SubFilter /ETSI.RFC3161, PAdES B-LTA)' }),
  ),
  level: O(
    Nullable(
      StringEnum(['B-B', 'B-T', 'B-LT', 'B-LTA'] as const, {
        description: 'PAdES baseline level reached; null for document timestamps and non-PAdES signatures (adbe.pkcs7.detached, …)',
      }),
    ),
  ),
  revocation: O(Revocation),
  fieldName: O(Nullable(Type.String(), { description: 'null for a signature dictionary no field points at (orphaned)' })),
  subFilter: O(Nullable(Type.String())),
  digestAlgorithm: O(Nullable(Type.String())),
  signatureAlgorithm: O(
    Nullable(Type.String({ description: 'RSA, RSASSA-PSS (hash, MGF1 hash, salt length), ECDSA, Ed25519 or Ed448, as read from the CMS' })),
  ),
  signedAt: O(Nullable(Type.String({ format: 'date-time' }))),
  timestamp: O(Type.Object({ time: O(Type.String()), valid: O(Type.Boolean()), trusted: O(Type.Boolean()), tsaSubject: O(Nullable(Type.String())) })),
  signer: O(SignerCertificate),
  byteRange: O(Type.Array(Type.Number())),
  coverage: O(StringEnum(['ENTIRE_FILE', 'ENTIRE_REVISION', 'PARTIAL', 'UNCLEAR'] as const)),
  integrity: O(Type.Object({ digestMatches: O(Type.Boolean()), signatureValid: O(Type.Boolean()) })),
  certificate: O(Type.Object({ chainValid: O(Type.Boolean()), trusted: O(Type.Boolean()), validAtSigningTime: O(Type.Boolean()) })),
  modificationsAfter: O(Type.Object({ level: O(StringEnum(LEVEL)), details: O(Type.Array(ModificationDetail)) })),
  docMdp: O(
    Type.Object({
      permission: O(Type.Unsafe<1 | 2 | 3>({ type: 'integer', enum: [1, 2, 3] })),
      respected: O(Type.Boolean()),
      lockedFields: O(
        Type.Unsafe<string[] | 'ALL'>({
          anyOf: [
            { type: 'array', items: { type: 'string' } },
            { type: 'string', enum: ['ALL'] },
          ],
        }),
      ),
    }),
  ),
  indication: O(StringEnum(['TOTAL_PASSED', 'INDETERMINATE', 'TOTAL_FAILED'] as const)),
  subIndication: O(Type.String()),
  issuedByThisService: O(Type.Boolean()),
  revision: O(Type.Integer({ description: '1-based revision the signature covers' })),
  certifying: O(Type.Boolean()),
  orphaned: O(Type.Boolean()),
  valid: O(Type.Boolean()),
  problems: O(Type.Array(Type.String())),
  warnings: O(Type.Array(Type.String())),
});

export const VerifyResponse = Type.Object({
  valid: Type.Boolean(),
  indication: StringEnum(['TOTAL_PASSED', 'INDETERMINATE', 'TOTAL_FAILED', 'NO_SIGNATURE_FOUND'] as const),
  reason: Type.String(),
  signatureCount: Type.Integer({ description: 'entries of signatures[]: signatures and document timestamps' }),
  documentTimestampCount: O(Type.Integer({ description: 'entries of signatures[] with type timestamp' })),
  signer: O(Type.Object({ name: O(Nullable(Type.String())), email: O(Nullable(Type.String())), signedAt: O(Nullable(Type.String())) })),
  signatures: Type.Array(SignatureReport),
  unsignedSignatureFields: O(Type.Array(Type.Object({ fieldName: O(Type.String()), hasAppearance: O(Type.Boolean()) }))),
  document: Type.Object({ sha256: O(Type.String()), revisions: O(Type.Integer()), size: O(Type.Integer()) }),
  auditTrail: O(
    Type.Object(
      { hashMatches: O(Type.Boolean()), coveredBySignature: O(Type.Boolean()) },
      { additionalProperties: true, description: "Folio's embedded audit-trail.json, plus hashMatches and coveredBySignature" },
    ),
  ),
});
export type VerifyResponseBody = Static<typeof VerifyResponse>;
