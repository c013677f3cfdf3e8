/**
 * A sign request built outside HTTP (the CLI's local mode) goes through the route's own check: the request
 * schema without its document, then checkSignRequest (src/sign/request-check.ts `checkSignFields`). Each bad
 * body here is sent to POST /v1/sign too, and both must name the same fields with the same issues: there is
 * no second copy of a pattern, a limit or a calendar rule to drift.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioError, type ErrorDetail } from '../../src/errors.js';
import { checkSignFields, type SignFieldsBody } from '../../src/sign/request-check.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

const good: SignFieldsBody = {
  signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
  auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T09:00:00Z' }],
};

const cases: Array<[string, Partial<SignFieldsBody> & Record<string, unknown>]> = [
  ['a one-letter name', { signer: { name: ' A ', email: 'ada@example.com' } }],
  ['an e-mail with an angle bracket (the CLI once let it through)', { signer: { name: 'Ada Lovelace', email: 'ada<x@example.com' } }],
  ['an e-mail without a domain', { signer: { name: 'Ada Lovelace', email: 'ada@example' } }],
  [
    'a date JavaScript would roll over (2026-02-30, the CLI once signed it as 2 March)',
    { auditTrail: [{ type: 'x', timestamp: '2026-02-30T10:00:00Z' }] },
  ],
  ['a time that is no date-time', { auditTrail: [{ type: 'x', timestamp: 'yesterday' }] }],
  ['an unknown level', { level: 'B-X' as never }],
  ['an address that is no IP', { signer: { name: 'Ada Lovelace', email: 'ada@example.com', ip: '256.1.1.1' } }],
  ['an empty audit trail', { auditTrail: [] }],
  ['an unknown field', { extra: 1 }],
  ['a signer without an e-mail', { signer: { name: 'Ada Lovelace' } as never }],
  [
    'event data over 16 KB and a bad e-mail together',
    {
      signer: { name: 'Ada Lovelace', email: 'no' },
      auditTrail: [{ type: 'x', timestamp: '2026-11-20T09:00:00Z', data: { b: 'x'.repeat(17_000) } }],
    },
  ],
];

function outsideHttp(body: SignFieldsBody): ErrorDetail[] {
  try {
    checkSignFields(body);
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('VALIDATION_ERROR');
    return (e as FolioError).details ?? [];
  }
  throw new Error('accepted');
}

const byField = (details: ErrorDetail[]) => [...details].sort((a, b) => `${a.field} ${a.issue}`.localeCompare(`${b.field} ${b.issue}`));

describe('checkSignFields answers as POST /v1/sign does', () => {
  it('accepts a good request and hands back Dates and a trimmed name', () => {
    const checked = checkSignFields({ ...good, signer: { name: '  Ada Lovelace ', email: 'ada@example.com' } });
    expect(checked.signer.name).toBe('Ada Lovelace');
    expect(checked.auditTrail[0]!.timestamp).toEqual(new Date('2026-11-20T09:00:00Z'));
  });

  it.each(cases)('%s', async (_, change) => {
    const body = { ...good, ...change } as SignFieldsBody;
    const ours = outsideHttp(body);
    const res = await fetch(
      `${t.url}/v1/sign`,
      authed(t, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ document: { base64: 'JVBERi0xLjQK' }, ...body }),
      }),
    );
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { code: string; details?: ErrorDetail[] };
    expect(answer.code).toBe('VALIDATION_ERROR');
    expect(ours.length).toBeGreaterThan(0);
    // The same fields; where the route words an issue itself (patterns, calendar, size), the same words.
    expect(byField(ours).map((d) => d.field)).toEqual(byField(answer.details ?? []).map((d) => d.field));
    const worded = new Set([
      'unknown property',
      "must have required property 'email'",
      'must be 2 to 255 characters',
      'must be an e-mail address',
      'must be an IPv4 or IPv6 address',
      'must be an ISO 8601 date-time',
      'must be at most 16 KB as JSON',
    ]);
    for (const d of answer.details ?? []) if (worded.has(d.issue)) expect(ours).toContainEqual(d);
  });
});
