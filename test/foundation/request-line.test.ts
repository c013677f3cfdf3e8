/**
 * The per-request log line that src/logger.ts assembles itself for the service's own logger is the line
 * pino writes for the same fields (same keys, order and values), at the level pino would use, and is left
 * out below the logger's level.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, requestLineWriter } from '../../src/logger.js';

function capture(level: string) {
  const lines: string[] = [];
  const logger = createLogger(level, 'folio', { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}

describe('request line', () => {
  it('is byte for byte what pino writes for the same fields, time aside', () => {
    const { logger, lines } = capture('debug');
    const write = requestLineWriter(logger);
    const fields = { reqId: 'a8c5e0b8-1a2b-4c3d-9e8f-0123456789ab', method: 'DELETE', route: '/v1/auth/keys/:keyId', status: 204, ms: 3 };
    write(false, fields.reqId, fields.method, fields.route, fields.status, fields.ms);
    logger.child({}, { redact: [] }).info(fields, 'request completed');
    write(true, 'client.id:1', 'GET', '/v1/health', 200, 0);
    logger.child({}, { redact: [] }).debug({ reqId: 'client.id:1', method: 'GET', route: '/v1/health', status: 200, ms: 0 }, 'request completed');
    expect(lines).toHaveLength(4);
    const untimed = lines.map((l) => l.replace(/"time":\d+/, '"time":0'));
    expect(untimed[0]).toBe(untimed[1]);
    expect(untimed[2]).toBe(untimed[3]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, name: 'folio', ...fields, msg: 'request completed' });
    expect(JSON.parse(lines[2]!)).toMatchObject({ level: 20 });
  });

  it('follows the logger level', () => {
    const { logger, lines } = capture('info');
    const write = requestLineWriter(logger);
    write(true, 'x', 'GET', '/v1/health', 200, 0);
    expect(lines).toHaveLength(0);
    write(false, 'x', 'GET', '/v1/health', 503, 0);
    expect(lines).toHaveLength(1);
    logger.level = 'warn';
    write(false, 'x', 'GET', '/v1/health', 503, 0);
    expect(lines).toHaveLength(1);
  });
});
