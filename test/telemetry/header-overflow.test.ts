/** The ingest answers oversized request headers with 431 and the same error envelope as the API. */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIngest, type TestIngest } from './helpers.js';

describe('ingest: request header fields too large', () => {
  let t: TestIngest;
  beforeAll(async () => {
    t = await startTestIngest();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 431 with the error envelope and closes the connection', async () => {
    const u = new URL(t.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const s = net.connect(Number(u.port), u.hostname, () =>
        s.write(`POST /v1/collect HTTP/1.1\r\nHost: x\r\nX-License-Key: lic_x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
      );
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      s.on('error', (e) => (chunks.length ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(e)));
    });
    const [head, body] = [answer.slice(0, answer.indexOf('\r\n\r\n')), answer.slice(answer.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8/i);
    expect(head).toMatch(/\r\nConnection: close/i);
    const envelope = JSON.parse(body) as Record<string, unknown>;
    expect(envelope).toMatchObject({
      code: 'VALIDATION_ERROR',
      error: 'Request Header Fields Too Large',
      message: 'The request line or headers are too large',
    });
    expect(envelope.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
