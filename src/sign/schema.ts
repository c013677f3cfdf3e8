/** POST /v1/sign and GET /v1/verify/key (CONTRACT §5): the body and the answers. */
import { DocumentSource, ReturnedDocument, StringEnum, Type, type Static } from '../http/schema.js';

export const Signer = Type.Object(
  {
    name: Type.String({ minLength: 2, maxLength: 255, examples: ['Ada Lovelace'] }),
    email: Type.String({ minLength: 3, maxLength: 254, description: 'E-mail address', examples: ['ada@example.org'] }),
    ip: Type.Optional(Type.String({ maxLength: 64, description: 'IPv4 or IPv6 address' })),
    userAgent: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const AuditTrailEvent = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 256, examples: ['document.viewed'] }),
  timestamp: Type.String({ maxLength: 64, description: 'ISO 8601 date-time (UTC when no zone is given)', examples: ['2026-11-24T09:30:00Z'] }),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Event details, at most 16 KB as JSON' })),
});

export const SignRequest = Type.Object(
  {
    document: DocumentSource,
    signer: Signer,
    auditTrail: Type.Array(AuditTrailEvent, { minItems: 1, maxItems: 25_000 }),
    eventId: Type.Optional(Type.String({ maxLength: 128 })),
    metadata: Type.Optional(
      Type.Object(
        { ip: Type.Optional(Type.String({ maxLength: 64 })), userAgent: Type.Optional(Type.String({ maxLength: 1024 })) },
        { additionalProperties: true, description: 'ip, userAgent and any custom properties; embedded in audit-trail.json' },
      ),
    ),
    certificate: Type.Optional(
      Type.Object(
        { enabled: Type.Optional(Type.Boolean({ default: true, description: 'Append the audit-trail page(s)' })) },
        { additionalProperties: false },
      ),
    ),
    level: Type.Optional(
      StringEnum(['B-B', 'B-T', 'B-LT', 'B-LTA'] as const, {
        description:
          'PAdES baseline level. B-B: signature only. B-T: plus an RFC 3161 signature timestamp. B-LT: plus a Document Security Store ' +
          "(/DSS) with the signer's chain, OCSP/CRL data and a /VRI entry. B-LTA: plus a document timestamp over everything. " +
          'Default: B-T when the server has TSA_URL, else B-B. Levels above B-B need TSA_URL (else 400 VALIDATION_ERROR naming `level`); ' +
          'B-LT/B-LTA with a SIGNING_P12 identity need its OCSP/CRL hosts on URL_FETCH_ALLOWLIST.',
        examples: ['B-LTA'],
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        document: { url: 'https://example.org/contract.pdf' },
        signer: { name: 'Ada Lovelace', email: 'ada@example.org', ip: '203.0.113.7' },
        auditTrail: [
          { type: 'document.viewed', timestamp: '2026-11-24T09:30:00Z' },
          { type: 'document.signed', timestamp: '2026-11-24T09:31:12Z' },
        ],
        eventId: 'evt_42',
      },
    ],
  },
);
export type SignRequestBody = Static<typeof SignRequest>;

export const SignResponse = Type.Object({
  document: Type.Object({ base64: ReturnedDocument.properties.base64, contentType: StringEnum(['application/pdf'] as const) }),
});
export type SignResponseBody = Static<typeof SignResponse>;

export const PublicKeyResponse = Type.Object({
  algorithm: Type.String({ description: 'Signature algorithm of the signing key', examples: ['RSA'] }),
  certificate: Type.String({ description: 'Signing certificate (PEM)' }),
  publicKey: Type.String({ description: 'Public key (PEM, SubjectPublicKeyInfo)' }),
  fingerprint: Type.String({ description: 'SHA-256 of the certificate, colon-separated hex' }),
  validFrom: Type.String({ format: 'date-time' }),
  validTo: Type.String({ format: 'date-time' }),
  issuer: Type.String(),
  subject: Type.String(),
});
export type PublicKeyResponseBody = Static<typeof PublicKeyResponse>;
