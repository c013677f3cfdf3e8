/**
 * POST /v1/sign and GET /v1/verify/key (CONTRACT §5). Thin: validates the request shape, resolves the
 * document and hands it to the signing engine in src/sign/.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { FolioError, type ErrorDetail } from '../../errors.js';
import { errorResponses } from '../envelope.js';
import type { Services } from '../../services.js';
import { documentSourceSchema, resolveDocumentSource, type DocumentSource } from '../../fetch/document-source.js';
import { describeIdentity, type AuditEvent } from '../../sign/index.js';
import { isZip } from '../../docx/package.js';
import { abandonSignal } from '../abandon.js';

interface SignBody {
  document: DocumentSource;
  signer: { name: string; email: string; ip?: string; userAgent?: string };
  auditTrail: Array<{ type: string; timestamp: string; data?: Record<string, unknown> }>;
  eventId?: string;
  metadata?: Record<string, unknown> & { ip?: string; userAgent?: string };
  certificate?: { enabled?: boolean };
}

const MAX_EVENT_DATA_BYTES = 16 * 1024;
const EMAIL = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\].]{2,}$/;
// ISO 8601 date-time: extended or basic format, `T` (or RFC 3339's space), optional seconds and fraction,
// optional zone (UTC when absent); a bare calendar date means its midnight UTC.
const ISO_DATE_TIME = /^(\d{4})-?(\d{2})-?(\d{2})(?:[Tt ](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Parses an ISO 8601 date-time into an ISO UTC string, or undefined when it is not one. */
export function parseIsoTimestamp(value: string): string | undefined {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', rawZone = 'Z'] = m;
  const zone = rawZone.toUpperCase();
  const z = zone === 'Z' ? 'Z' : zone.length === 3 ? `${zone}:00` : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : '';
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${z}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Reject calendar dates that JavaScript would roll over (2026-02-30 → March 2).
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (calendar.getUTCDate() !== Number(d) || calendar.getUTCMonth() + 1 !== Number(mo)) return undefined;
  return date.toISOString();
}

/** The checks JSON Schema cannot express well, with one detail per offending field. */
function semanticDetails(body: SignBody): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  // Characters, not UTF-16 units: 255 emoji are 255 characters (JSON Schema's maxLength counts the same way).
  const nameLength = [...body.signer.name.trim()].length;
  if (nameLength < 2 || nameLength > 255) details.push({ field: 'signer.name', issue: 'must be 2 to 255 characters' });
  if (body.signer.email.length > 254 || !EMAIL.test(body.signer.email)) details.push({ field: 'signer.email', issue: 'must be an e-mail address' });
  if (body.signer.ip !== undefined && net.isIP(body.signer.ip) === 0) details.push({ field: 'signer.ip', issue: 'must be an IPv4 or IPv6 address' });
  if (typeof body.metadata?.ip === 'string' && net.isIP(body.metadata.ip) === 0) details.push({ field: 'metadata.ip', issue: 'must be an IPv4 or IPv6 address' });
  body.auditTrail.forEach((event, i) => {
    if (parseIsoTimestamp(event.timestamp) === undefined) details.push({ field: `auditTrail.${i}.timestamp`, issue: 'must be an ISO 8601 date-time' });
    if (event.data !== undefined && Buffer.byteLength(JSON.stringify(event.data), 'utf8') > MAX_EVENT_DATA_BYTES) {
      details.push({ field: `auditTrail.${i}.data`, issue: 'must be at most 16 KB as JSON' });
    }
  });
  return details;
}

const signBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['document', 'signer', 'auditTrail'],
  properties: {
    document: documentSourceSchema,
    signer: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'email'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 255 },
        email: { type: 'string', minLength: 3, maxLength: 254, description: 'E-mail address' },
        ip: { type: 'string', maxLength: 64, description: 'IPv4 or IPv6 address' },
        userAgent: { type: 'string', maxLength: 1024 },
      },
    },
    auditTrail: {
      type: 'array',
      minItems: 1,
      maxItems: 25_000,
      items: {
        type: 'object',
        required: ['type', 'timestamp'],
        properties: {
          type: { type: 'string', minLength: 1, maxLength: 256 },
          timestamp: { type: 'string', maxLength: 64, description: 'ISO 8601 date-time (UTC when no zone is given)' },
          data: { type: 'object', description: 'Event details, at most 16 KB as JSON' },
        },
      },
    },
    eventId: { type: 'string', maxLength: 128 },
    metadata: {
      type: 'object',
      properties: { ip: { type: 'string', maxLength: 64 }, userAgent: { type: 'string', maxLength: 1024 } },
      description: 'ip, userAgent and any custom properties; embedded in audit-trail.json',
    },
    certificate: {
      type: 'object',
      additionalProperties: false,
      properties: { enabled: { type: 'boolean', default: true, description: 'Append the audit-trail page(s)' } },
    },
  },
} as const;

const publicKeySchema = {
  type: 'object',
  required: ['algorithm', 'certificate', 'publicKey', 'fingerprint', 'validFrom', 'validTo', 'issuer', 'subject'],
  properties: {
    algorithm: { type: 'string', description: 'Signature algorithm of the signing key' },
    certificate: { type: 'string', description: 'Signing certificate (PEM)' },
    publicKey: { type: 'string', description: 'Public key (PEM, SubjectPublicKeyInfo)' },
    fingerprint: { type: 'string', description: 'SHA-256 of the certificate, colon-separated hex' },
    validFrom: { type: 'string', format: 'date-time' },
    validTo: { type: 'string', format: 'date-time' },
    issuer: { type: 'string' },
    subject: { type: 'string' },
  },
} as const;

export function signRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.route<{ Body: SignBody }>({
      method: 'POST',
      url: '/v1/sign',
      config: { auth: true, documentEndpoint: true, endpoint: 'sign' },
      schema: {
        summary: 'Sign a PDF or DOCX: audit-trail pages, embedded audit-trail.json and a PAdES signature',
        description:
          'The PDF is kept byte for byte and extended by one incremental update (earlier signatures stay valid); a DOCX is converted to PDF first. ' +
          'The signature is PAdES B-B (ETSI.CAdES.detached, SHA-256, ESS signing-certificate-v2), B-T when the server has a TSA_URL.',
        tags: ['sign'],
        body: signBodySchema,
        response: {
          200: {
            type: 'object',
            required: ['document'],
            properties: {
              document: {
                type: 'object',
                required: ['base64', 'contentType'],
                properties: { base64: { type: 'string' }, contentType: { type: 'string', enum: ['application/pdf'] } },
              },
            },
          },
          ...errorResponses(400, 401, 413, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const body = request.body;
        const details = semanticDetails(body);
        if (details.length > 0) {
          throw new FolioError('VALIDATION_ERROR', `Invalid request: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}`, { details });
        }
        if (!services.signing) throw new FolioError('INTERNAL_ERROR', 'No signing identity is configured');
        const bytes = await resolveDocumentSource(body.document, services.fetcher);
        const auditTrail: AuditEvent[] = body.auditTrail.map((e) => ({
          type: e.type,
          timestamp: parseIsoTimestamp(e.timestamp)!,
          ...(e.data !== undefined ? { data: e.data } : {}),
        }));
        // A DOCX becomes a PDF in the office engine's supervised processes before the signing job.
        const pdfOfDocx = isZip(bytes) && services.office ? await services.office.docxToPdf(bytes) : undefined;
        const result = await services.enginePool.run(
          'sign.seal',
          {
            document: bytes,
            pdfOfDocx,
            signer: { ...body.signer, name: body.signer.name.trim() },
            auditTrail,
            eventId: body.eventId,
            metadata: body.metadata,
            auditPages: body.certificate?.enabled ?? true,
          },
          { signal: abandonSignal(reply) },
        );
        if (result.timestampSkipped !== undefined) {
          request.log.warn({ reason: result.timestampSkipped }, 'TSA failed; signed without a timestamp (TSA_OPTIONAL)');
        }
        return { document: { base64: Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength).toString('base64'), contentType: 'application/pdf' } };
      },
    });

    app.route({
      method: 'GET',
      url: '/v1/verify/key',
      config: { auth: true, endpoint: 'verify-key' },
      schema: {
        summary: "The service's signing certificate and public key",
        tags: ['sign'],
        response: { 200: publicKeySchema, ...errorResponses(401, 429, 500) },
      },
      handler: async () => {
        if (!services.signing) throw new FolioError('INTERNAL_ERROR', 'No signing identity is configured');
        return describeIdentity(services.signing);
      },
    });
  };
}
