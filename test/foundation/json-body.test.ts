/**
 * The JSON body scan that runs before JSON.parse on the event loop: nesting and value-count bounds, and
 * string skipping that honours escapes (so brackets and quotes inside strings never count).
 */
import { describe, expect, it } from 'vitest';
import { refusal as refusalOf } from '../support/refusal.js';
import { MAX_JSON_VALUES, jsonShape, parseJsonBody } from '../../src/http/json-body.js';

const refusal = (text: string) => refusalOf(() => parseJsonBody(text));

describe('jsonShape', () => {
  it('counts nesting and values outside strings only', () => {
    expect(jsonShape('{"a":[1,2,{"b":3}]}')).toEqual({ depth: 3, values: 5 });
    expect(jsonShape('{"a":"[[[[{{,,,"}')).toEqual({ depth: 1, values: 1 });
  });

  it('skips escaped quotes and even runs of backslashes correctly', () => {
    // "x\"[" is one string; "y\\" ends at its quote, so the [ after it counts.
    expect(jsonShape('{"k":"x\\"[","m":"y\\\\","n":[1]}')).toEqual({ depth: 2, values: 4 });
  });

  it('stops early past the limits', () => {
    expect(jsonShape('['.repeat(10_000), 64).depth).toBe(65);
    expect(jsonShape(`[${'0,'.repeat(1_000)}0]`, 64, 100).values).toBe(101);
  });
});

describe('parseJsonBody bounds', () => {
  it(`refuses a body of more than ${MAX_JSON_VALUES} values with 400 naming the limit`, () => {
    const text = `{"document":{"base64":""},"x":[${'{},'.repeat(MAX_JSON_VALUES)}{}]}`;
    const e = refusal(text);
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/more than 500,000 values/);
    expect(e.details?.[0]).toEqual({ field: 'body', issue: `more than ${MAX_JSON_VALUES} values` });
  });

  it('accepts a large base64 document (one long string) and many values below the bound', () => {
    const base64 = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const body = parseJsonBody(`{"document":{"base64":"${base64}"}}`) as { document: { base64: string } };
    expect(body.document.base64.length).toBe(base64.length);
    const cells = JSON.stringify({ rows: Array.from({ length: 2_000 }, (_, r) => Array.from({ length: 100 }, (_, c) => `${r}:${c}`)) });
    expect((parseJsonBody(cells) as { rows: string[][] }).rows[1_999]![99]).toBe('1999:99');
  });

  it('still refuses nesting beyond 64 levels', () => {
    expect(refusal(`${'['.repeat(65)}${']'.repeat(65)}`).message).toMatch(/nested deeper than 64/);
  });
});
