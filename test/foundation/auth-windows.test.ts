/**
 * The per-client register/verify windows are settings (issue 14): AUTH_REGISTER_PER_CLIENT,
 * AUTH_VERIFY_PER_CLIENT and AUTH_CLIENT_WINDOW_SECONDS reach the running API (in-process windows here;
 * test/foundation/redis-limit.test.ts covers the shared ones), and bad values stop start-up naming them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { ConfigError } from '../../src/config/index.js';
import { loadConfig } from '../../src/modules/config.js';

describe('AUTH_REGISTER_PER_CLIENT, AUTH_VERIFY_PER_CLIENT, AUTH_CLIENT_WINDOW_SECONDS', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: { AUTH_REGISTER_PER_CLIENT: '3', AUTH_VERIFY_PER_CLIENT: '2', AUTH_CLIENT_WINDOW_SECONDS: '45' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('the fourth register from one client within the window is 429, with Retry-After within the window', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${api.url}/v1/auth/register?email=window${i}@example.com`)).status).toBe(200);
    }
    const refused = await fetch(`${api.url}/v1/auth/register?email=window3@example.com`);
    expect(refused.status).toBe(429);
    expect((await refused.json()) as object).toMatchObject({ code: 'RATE_LIMIT_ERROR' });
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(45);
  });

  it('the third verify from one client within the window is 429', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${api.url}/v1/auth/verify?email=window0@example.com&code=00000${i}`);
      expect(r.status).not.toBe(429);
    }
    const refused = await fetch(`${api.url}/v1/auth/verify?email=window0@example.com&code=000009`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(45);
  });

  it('defaults are 20 registers and 30 verifies per 10 minutes; bad values name the variable', () => {
    const defaults = loadConfig({});
    expect([defaults.authRegisterPerClient, defaults.authVerifyPerClient, defaults.authClientWindowMs]).toEqual([20, 30, 600_000]);
    for (const [name, value] of [
      ['AUTH_REGISTER_PER_CLIENT', '0'],
      ['AUTH_VERIFY_PER_CLIENT', 'many'],
      ['AUTH_CLIENT_WINDOW_SECONDS', '5'],
    ] as const) {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(name);
    }
  });
});
