/**
 * POST /v1/sign and GET /v1/verify/key (CONTRACT §5). Thin: validates the request shape, resolves the
 * document and hands it to the signing engine in the engine pool.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError, type ErrorDetail } from '../errors.js';
import { errorResponses } from '../http/schema.js';
import { abandonSignal } from '../http/abandon.js';
import type { Capability } from '../http/capability.js';
import type { Services } from '../services.js';
import { resolveDocumentSource } from '../fetch/document-source.js';
import { isZip } from '../formats/sniff.js';
import { describeIdentity, resolveLevel, type AuditEvent } from './index.js';
import { caRoutes } from './ca-routes.js';
import { PublicKeyResponse, SignRequest, SignResponse, type SignRequestBody } from './schema.js';

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
function semanticDetails(body: SignRequestBody): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  // Characters, not UTF-16 units: 255 emoji are 255 characters (JSON Schema's maxLength counts the same way).
  const nameLength = [...body.signer.name.trim()].length;
  if (nameLength < 2 || nameLength > 255) details.push({ field: 'signer.name', issue: 'must be 2 to 255 characters' });
  if (body.signer.email.length > 254 || !EMAIL.test(body.signer.email)) details.push({ field: 'signer.email', issue: 'must be an e-mail address' });
  if (body.signer.ip !== undefined && net.isIP(body.signer.ip) === 0) details.push({ field: 'signer.ip', issue: 'must be an IPv4 or IPv6 address' });
  if (typeof body.metadata?.ip === 'string' && net.isIP(body.metadata.ip) === 0)
    details.push({ field: 'metadata.ip', issue: 'must be an IPv4 or IPv6 address' });
  body.auditTrail.forEach((event, i) => {
    if (parseIsoTimestamp(event.timestamp) === undefined)
      details.push({ field: `auditTrail.${i}.timestamp`, issue: 'must be an ISO 8601 date-time' });
    if (event.data !== undefined && Buffer.byteLength(JSON.stringify(event.data), 'utf8') > MAX_EVENT_DATA_BYTES) {
      details.push({ field: `auditTrail.${i}.data`, issue: 'must be at most 16 KB as JSON' });
    }
  });
  return details;
}

function signRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/sign',
      config: { auth: true, documentEndpoint: true, endpoint: 'sign' },
      schema: {
        operationId: 'signDocument',
        summary: 'Sign a PDF or DOCX: audit-trail pages, embedded audit-trail.json and a PAdES signature',
        description:
          'The PDF is kept byte for byte and extended by one incremental update (earlier signatures stay valid); a DOCX is converted to PDF first. ' +
          'The signature is PAdES (ETSI.CAdES.detached, SHA-256, ESS signing-certificate-v2) at the requested `level`: B-B, B-T (RFC 3161 signature timestamp), ' +
          'B-LT (plus a /DSS with chain, OCSP and CRL data, in a further incremental update) or B-LTA (plus a document timestamp); ' +
          'by default B-T when the server has a TSA_URL, else B-B.',
        tags: ['sign'],
        body: SignRequest,
        response: { 200: SignResponse, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      handler: async (request, reply) => {
        const body = request.body;
        const details = semanticDetails(body);
        if (details.length > 0) {
          throw new FolioError('VALIDATION_ERROR', `Invalid request: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}`, { details });
        }
        if (!services.signing) throw new FolioError('INTERNAL_ERROR', 'No signing identity is configured');
        // A level this server cannot give is refused before the document is fetched or converted.
        const level = resolveLevel(body.level, {
          tsaUrl: services.config.tsaUrl,
          identity: services.signing,
          urlFetchAllowlist: services.config.urlFetchAllowlist,
        });
        const bytes = await resolveDocumentSource(body.document, services.fetcher);
        const auditTrail: AuditEvent[] = body.auditTrail.map((e) => ({
          type: e.type,
          timestamp: parseIsoTimestamp(e.timestamp)!,
          ...(e.data !== undefined ? { data: e.data } : {}),
        }));
        // A DOCX becomes a PDF in the office engine's supervised processes before the signing job.
        const officeRun = { signal: abandonSignal(reply), deadline: request.deadline };
        const pdfOfDocx = isZip(bytes) && services.office ? await services.office.docxToPdf(bytes, {}, officeRun) : undefined;
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
            // Absent stays absent: the engine applies TSA_OPTIONAL to the implicit level only.
            ...(body.level !== undefined ? { level } : {}),
          },
          { signal: abandonSignal(reply), deadline: request.deadline },
        );
        if (result.timestampSkipped !== undefined) {
          request.log.warn({ reason: result.timestampSkipped }, 'TSA failed; signed without a timestamp (TSA_OPTIONAL)');
        }
        return {
          document: {
            base64: Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength).toString('base64'),
            contentType: 'application/pdf' as const,
          },
        };
      },
    });

    // The identity is fixed for the life of the process (a new key needs a restart): described and serialised
    // once by the route's own schema (the same bytes as returning the object), not per request. Serialising
    // the PEM certificate (escaping its newlines) and parsing it cost more than the rest of the request.
    let keyJson: string | undefined;
    app.route({
      method: 'GET',
      url: '/v1/verify/key',
      config: { auth: true, endpoint: 'verify-key' },
      schema: {
        operationId: 'getSigningKey',
        summary: "The service's signing certificate and public key",
        tags: ['sign'],
        response: { 200: PublicKeyResponse, ...errorResponses(401, 429, 500) },
      },
      handler: (_request, reply: FastifyReply) => {
        keyJson ??= String(reply.serialize(describeIdentity(services.signing!)));
        reply.type('application/json; charset=utf-8').send(keyJson);
      },
    });

    const signing = services.signing;
    if (signing?.ca) caRoutes(root, { ...signing, ca: signing.ca });
  };
}

/** Needs the signing identity (SIGNING_P12 or the generated one); without it neither route exists. */
export const signCapability: Capability = { name: 'sign', available: (s) => s.signing !== undefined, routes: signRoutes };
