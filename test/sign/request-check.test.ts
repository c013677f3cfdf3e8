/**
 * The sign request's one check (issue 26): the schema's patterns (schema.ts) answer as the hand checks they
 * replaced did — `net.isIP` for addresses, String#trim for the name — and request-check.ts parses each
 * timestamp once, refuses calendar dates that do not exist, bounds event data, and lists the schema's
 * details with its own in one VALIDATION_ERROR. Patterns are compiled with the `u` flag, as Ajv does.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { checkSignRequest, parseIsoTimestamp } from '../../src/sign/request-check.js';
import { formatUtc } from '../../src/sign/audit-trail.js';
import { DATE_TIME_PATTERN, EMAIL_PATTERN, IP_PATTERN, NAME_PATTERN, type SignRequestBody } from '../../src/sign/schema.js';

const ip = new RegExp(IP_PATTERN, 'u');
const name = new RegExp(NAME_PATTERN, 'u');
const email = new RegExp(EMAIL_PATTERN, 'u');
const dateTime = new RegExp(DATE_TIME_PATTERN, 'u');

/** A deterministic generator (mulberry32), so a failure names a reproducible case. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('IP_PATTERN accepts exactly what net.isIP accepts', () => {
  const fixed = [
    '1.2.3.4',
    '0.0.0.0',
    '255.255.255.255',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '::',
    '::1',
    '1::',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7::',
    '::1:2:3:4:5:6:7',
    '1::2::3',
    '::ffff:1.2.3.4',
    '1:2:3:4:5:6:1.2.3.4',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::1.2.3.4',
    '1::1.2.3.4',
    'fe80::1%eth0',
    'fe80::1%',
    'fe80::1%a.b:c-d',
    'fe80::1%_',
    '2001:db8::7',
    '2001:DB8:0:0:0:0:0:1',
    '12345::1',
    ':1:2:3:4:5:6:7',
    '1.2.3.4%eth0',
    '',
    ' 1.2.3.4',
  ];
  it.each(fixed)('%j', (s) => expect(ip.test(s)).toBe(net.isIP(s) !== 0));

  it('on 20,000 generated near-addresses', () => {
    const rnd = random(26);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const parts = ['', '0', '1', '9', '10', '99', '255', '256', '01', 'a', 'ff', 'FFFF', '10000', 'g', '1.2.3.4', '%eth0', '%'];
    for (let i = 0; i < 20_000; i++) {
      const n = 1 + Math.floor(rnd() * 9);
      let s = '';
      for (let k = 0; k < n; k++) s += pick(parts) + (k < n - 1 ? pick([':', '::', '.', ':']) : '');
      expect([s, ip.test(s)]).toEqual([s, net.isIP(s) !== 0]);
    }
  });
});

describe('NAME_PATTERN: at least two characters once trimmed', () => {
  it.each(['Li', ' A ', 'A', '  ', '\u3000X\u3000', 'Ada Lovelace', '\tAB\n', 'A\u00a0B', '😀😀', ' 😀 '])('%j', (s) =>
    expect(name.test(s)).toBe([...s.trim()].length >= 2),
  );
});

describe('EMAIL_PATTERN', () => {
  it.each([
    ['ada@example.org', true],
    ['a.b+c@mail.example.co', true],
    ['not-an-email', false],
    ['a@b.c', false],
    ['a b@example.org', false],
    ['a@example', false],
    ['<a>@example.org', false],
    ['a@@example.org', false],
  ])('%s → %s', (s, ok) => expect(email.test(s)).toBe(ok));
});

describe('timestamps: syntax in the schema, calendar and parse here', () => {
  it.each([
    ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T10:00:00+05:30', '2026-11-20T04:30:00.000Z'],
    ['20261120T100000+0530', '2026-11-20T04:30:00.000Z'],
    ['2026-11-20 10:00', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20', '2026-11-20T00:00:00.000Z'],
    ['2026-11-20T10:00:00,123456Z', '2026-11-20T10:00:00.123Z'],
  ])('%s', (s, iso) => {
    expect(dateTime.test(s)).toBe(true);
    expect(parseIsoTimestamp(s)?.toISOString()).toBe(iso);
  });

  it('refuses what the pattern lets through but no calendar or clock has', () => {
    for (const s of ['2026-02-30T10:00:00Z', '2026-13-01', '2026-11-20T24:00:00Z', '2026-11-20T10:60:00Z']) {
      expect(dateTime.test(s)).toBe(true);
      expect(parseIsoTimestamp(s)).toBeUndefined();
    }
    expect(dateTime.test('yesterday')).toBe(false);
  });
});

const body = (over: Partial<SignRequestBody> = {}): SignRequestBody => ({
  document: { base64: 'JVBERi0=' },
  signer: { name: '  Ada Lovelace ', email: 'ada@example.org' },
  auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T10:00:00+01:00', data: { page: 1 } }],
  ...over,
});

describe('checkSignRequest', () => {
  it('hands the engine a trimmed name and Dates', () => {
    const checked = checkSignRequest(body());
    expect(checked.signer.name).toBe('Ada Lovelace');
    expect(checked.auditTrail).toEqual([{ type: 'document.signed', timestamp: new Date('2026-11-20T09:00:00Z'), data: { page: 1 } }]);
  });

  it("lists the schema's details with its own, once per field", () => {
    const schema = {
      message: 'Request body is invalid',
      details: [
        { field: 'signer.email', issue: 'must be an e-mail address' },
        { field: 'auditTrail.0.timestamp', issue: 'must be an ISO 8601 date-time' },
      ],
    };
    const events = [
      { type: 'a', timestamp: 'yesterday' },
      { type: 'b', timestamp: '2026-02-30T10:00:00Z' },
      { type: 'c', timestamp: '2026-11-20T10:00:00Z', data: { blob: 'x'.repeat(17 * 1024) } },
    ];
    let thrown: unknown;
    try {
      checkSignRequest(body({ auditTrail: events }), schema);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FolioError);
    const error = thrown as FolioError;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toBe('Request body is invalid');
    expect(error.details!.map((d) => d.field)).toEqual(['signer.email', 'auditTrail.0.timestamp', 'auditTrail.1.timestamp', 'auditTrail.2.data']);
  });

  it('looks only at values of the right type after a schema failure', () => {
    const broken = { signer: 'x', auditTrail: [null, 7, { timestamp: 12 }, { type: 'x', timestamp: '2026-02-30' }] } as unknown as SignRequestBody;
    expect(() => checkSignRequest(broken, { message: 'Request body is invalid', details: [{ field: 'signer', issue: 'must be object' }] })).toThrow(
      expect.objectContaining({
        details: [
          { field: 'signer', issue: 'must be object' },
          { field: 'auditTrail.3.timestamp', issue: 'must be an ISO 8601 date-time' },
        ],
      }),
    );
  });
});

describe('formatUtc (audit pages) reads the record as written, without a second parse', () => {
  it.each([
    ['2026-11-20T04:30:00.000Z', '2026-11-20 04:30:00 UTC'],
    ['2026-11-20T04:30:00.250Z', '2026-11-20 04:30:00.250 UTC'],
    ['2026-11-20T10:00:00+05:30', '2026-11-20 04:30:00 UTC'],
    ['not a time', 'not a time'],
  ])('%s', (iso, printed) => expect(formatUtc(iso)).toBe(printed));
});
