/**
 * POST /v1/sign and GET /v1/verify/key (docs/api.md § Sign): the body and the answers. The shape of every field —
 * e-mail address, IP addresses, the date-time syntax, a name that is not blank — is checked here, by the
 * route's compiled schema; what a schema cannot say (a calendar date that exists, the size of an event's
 * data as JSON) is checked once by request-check.ts.
 */
import { DocumentSource, ReturnedDocument, StringEnum, Type, type Static } from '../http/schema.js';

/** At least two characters once leading and trailing white space is trimmed (`\s` is what String#trim removes). */
export const NAME_PATTERN = '^\\s*\\S[\\s\\S]*\\S\\s*$';

/** An addr-spec without quoting or comments: one `@`, a dot in the domain, a top-level label of two or more. */
export const EMAIL_PATTERN = '^[^\\s@<>()",;:\\\\[\\]]+@[^\\s@<>()",;:\\\\[\\]]+\\.[^\\s@<>()",;:\\\\[\\].]{2,}$';

/**
 * ISO 8601 date-time: extended or basic format, `T` (or RFC 3339's space), optional seconds and fraction,
 * optional zone (UTC when absent); a bare calendar date means its midnight UTC. The groups are read by
 * request-check.ts, which also refuses dates the calendar does not have.
 */
export const DATE_TIME_PATTERN =
  '^(\\d{4})-?(\\d{2})-?(\\d{2})(?:[Tt ](\\d{2}):?(\\d{2})(?::?(\\d{2})(?:[.,](\\d{1,9}))?)?([Zz]|[+-]\\d{2}(?::?\\d{2})?)?)?$';

const IPV4_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** `[ *n( h16 ":" ) h16 ]`: up to n+1 groups before a `::`. */
const upTo = (n: number) => `(?:(?:${H16}:){0,${n}}${H16})?`;
/** RFC 4291 §2.2's text forms, as RFC 3986 §3.2.2 writes them: eight groups, or fewer around one `::`. */
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `${upTo(0)}::(?:${H16}:){4}${LS32}`,
  `${upTo(1)}::(?:${H16}:){3}${LS32}`,
  `${upTo(2)}::(?:${H16}:){2}${LS32}`,
  `${upTo(3)}::${H16}:${LS32}`,
  `${upTo(4)}::${LS32}`,
  `${upTo(5)}::${H16}`,
  `${upTo(6)}::`,
].join('|');
/** An IPv4 address (no leading zeros) or an IPv6 address with an optional zone (`%eth0`): what `net.isIP` accepts. */
export const IP_PATTERN = `^(?:${IPV4}|(?:${IPV6})(?:%[0-9A-Za-z.:-]+)?)$`;

const IpAddress = (extra: Record<string, unknown> = {}) =>
  Type.String({ maxLength: 64, pattern: IP_PATTERN, description: 'IPv4 or IPv6 address', ...extra });

export const Signer = Type.Object(
  {
    name: Type.String({
      minLength: 2,
      maxLength: 255,
      pattern: NAME_PATTERN,
      description: '2 to 255 characters, trimmed',
      examples: ['Ada Lovelace'],
    }),
    email: Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN, description: 'E-mail address', examples: ['ada@example.org'] }),
    ip: Type.Optional(IpAddress()),
    userAgent: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const AuditTrailEvent = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 256, examples: ['document.viewed'] }),
  timestamp: Type.String({
    maxLength: 64,
    pattern: DATE_TIME_PATTERN,
    description: 'ISO 8601 date-time (UTC when no zone is given)',
    examples: ['2026-11-24T09:30:00Z'],
  }),
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
        { ip: Type.Optional(IpAddress()), userAgent: Type.Optional(Type.String({ maxLength: 1024 })) },
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

const SigningCertificate = {
  algorithm: Type.String({
    description: 'Signature algorithm of the signing key',
    examples: ['ECDSA P-256 SHA-256', 'RSA-3072 PKCS#1 v1.5 SHA-256'],
  }),
  certificate: Type.String({ description: 'Signing certificate (PEM)' }),
  publicKey: Type.String({ description: 'Public key (PEM, SubjectPublicKeyInfo)' }),
  fingerprint: Type.String({ description: 'SHA-256 of the certificate, colon-separated hex' }),
  validFrom: Type.String({ format: 'date-time' }),
  validTo: Type.String({ format: 'date-time' }),
  issuer: Type.String(),
  subject: Type.String(),
};
export const PublicKeyResponse = Type.Object({
  ...SigningCertificate,
  previous: Type.Optional(
    Type.Array(Type.Object(SigningCertificate), {
      description:
        'During a key rotation (SIGNING_PREVIOUS_CERT_CHAIN): the certificates this service signed with before, still trusted by /v1/verify. Absent otherwise.',
    }),
  ),
});
export type PublicKeyResponseBody = Static<typeof PublicKeyResponse>;
