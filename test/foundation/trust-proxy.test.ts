/**
 * TRUST_PROXY (Fastify's trustProxy): the per-client register/verify windows key on the client address
 * Fastify derives. A request from a trusted proxy is counted for the address it forwards in
 * `X-Forwarded-For`; from any other peer the header is ignored, so a client cannot leave its window by
 * sending the header itself. Two source addresses on this machine (127.0.0.1 and 127.0.0.2, both loopback
 * on Linux) play the proxy and a direct client.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { ConfigError } from '../../src/config/index.js';
import { loadConfig } from '../../src/modules/config.js';

const PROXY = '127.0.0.1';
const DIRECT_CLIENT = '127.0.0.2';

let n = 0;
/** GET /v1/auth/register for a new e-mail address (so the per-address cooldown never answers) from `from`. */
function register(api: TestApi, from: string, forwardedFor?: string): Promise<number> {
  const url = new URL(`${api.url}/v1/auth/register?email=trust${n++}@example.com`);
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        localAddress: from,
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
  });
}

async function statuses(api: TestApi, from: string, forwarded: Array<string | undefined>): Promise<number[]> {
  const out: number[] = [];
  for (const f of forwarded) out.push(await register(api, from, f));
  return out;
}

describe('TRUST_PROXY and the per-client windows', () => {
  let api: TestApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });
  const start = async (trust?: string) => {
    api = await startTestApi({ env: { AUTH_REGISTER_PER_CLIENT: '2', ...(trust === undefined ? {} : { TRUST_PROXY: trust }) } });
    return api;
  };

  it('behind a trusted proxy address, each forwarded client has its own window; a direct client cannot dodge its own with the header', async () => {
    const a = await start(PROXY);
    // Through the proxy: 203.0.113.7's window holds after two, 203.0.113.8 still has its own.
    expect(await statuses(a, PROXY, ['203.0.113.7', '203.0.113.7', '203.0.113.7'])).toEqual([200, 200, 429]);
    expect(await statuses(a, PROXY, ['203.0.113.8', '198.51.100.1, 203.0.113.8'])).toEqual([200, 200]);
    // A client before the proxy that sends the header itself: the proxy appends the address it saw, and the
    // entries the client wrote are not from a trusted hop, so they count for nothing.
    expect(await statuses(a, PROXY, ['198.51.100.2, 203.0.113.8'])).toEqual([429]);
    // Directly from an address that is not a trusted proxy: the header is ignored, one window for all.
    expect(await statuses(a, DIRECT_CLIENT, ['198.51.100.10', '198.51.100.11', '198.51.100.12'])).toEqual([200, 200, 429]);
  });

  it('by default (no TRUST_PROXY) X-Forwarded-For is ignored', async () => {
    const a = await start();
    expect(await statuses(a, PROXY, ['198.51.100.20', '198.51.100.21', '198.51.100.22', undefined])).toEqual([200, 200, 429, 429]);
  });

  it('a hop count trusts that many proxies, whoever connects: the last forwarded entry is the client', async () => {
    const a = await start('1');
    expect(await statuses(a, DIRECT_CLIENT, ['198.51.100.30, 203.0.113.9', '198.51.100.31, 203.0.113.9', '203.0.113.9'])).toEqual([200, 200, 429]);
    expect(await statuses(a, DIRECT_CLIENT, ['203.0.113.10'])).toEqual([200]);
  });

  it('a CIDR that holds the peer trusts it; named ranges are proxy-addr’s', async () => {
    const a = await start('10.0.0.0/8, 127.0.0.0/30');
    expect(await statuses(a, DIRECT_CLIENT, ['203.0.113.11', '203.0.113.11', '203.0.113.12', '203.0.113.11'])).toEqual([200, 200, 200, 429]);
  });
});

describe('TRUST_PROXY values', () => {
  it('false by default; true, a hop count, or a list of addresses, CIDRs and named ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 192.168.1.5 ,fd00::/8,loopback, ::1 ' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.168.1.5',
      'fd00::/8',
      'loopback',
      '::1',
    ]);
  });

  it('anything else stops start-up naming TRUST_PROXY', () => {
    for (const bad of ['yes please', '10.0.0.0/33', 'fd00::/129', 'proxy.internal', '10.0.0.1/8/2', '10.0.0.0/', '33']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow('TRUST_PROXY');
    }
  });
});
