/**
 * The connection cap and the descriptor limit it is derived from (src/http/server-limits.ts): the cap stays
 * below the limit minus a reserve, split between the servers of one process, whatever MAX_CONNECTIONS says.
 * The servers' behaviour under the limits is asserted from outside in test/chaos/connections.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionCap, limitsFromConfig, openFileLimit } from '../../src/http/server-limits.js';
import { loadConfig } from '../../src/modules/config.js';

describe('connection cap', () => {
  it('reads the soft descriptor limit from /proc', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-limits-'));
    const file = path.join(dir, 'limits');
    fs.writeFileSync(
      file,
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            4096                 524288               files\n',
    );
    expect(openFileLimit(file)).toBe(4096);
    fs.writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
    expect(openFileLimit(file)).toBe(Number.MAX_SAFE_INTEGER);
    expect(openFileLimit(path.join(dir, 'missing'))).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
    if (fs.existsSync('/proc/self/limits')) expect(openFileLimit()).toBeGreaterThan(0);
  });

  it('keeps a reserve below the descriptor limit and splits the rest between the servers of a process', () => {
    expect(connectionCap(undefined, 1_048_576, 1)).toBe(10_000);
    // 20,000 descriptors: 2,000 kept back, 18,000 for two servers.
    expect(connectionCap(undefined, 20_000, 2)).toBe(9_000);
    expect(connectionCap(50_000, 20_000, 1)).toBe(18_000);
    // 1,024 descriptors: at least 512 kept back.
    expect(connectionCap(undefined, 1_024, 1)).toBe(512);
    expect(connectionCap(3_000, 1_048_576, 1)).toBe(3_000);
    expect(connectionCap(undefined, undefined, 1)).toBe(10_000);
  });

  it('takes its settings from the configuration, with the receive timeout never below the headers timeout', () => {
    const config = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', MAX_CONNECTIONS: '2000', HTTP_EXCHANGE_TIMEOUT_MS: '0' });
    const limits = limitsFromConfig(config, 1000, 1, 1_048_576);
    expect(limits).toMatchObject({
      headersTimeoutMs: 5000,
      receiveTimeoutMs: 5000,
      maxConnections: 2000,
      exchangeTimeoutMs: 0,
      keepAliveTimeoutMs: 72_000,
    });
    expect(() => loadConfig({ MAX_CONNECTIONS: '3' })).toThrow(/MAX_CONNECTIONS/);
  });
});
