/**
 * "A new capability is one folder and one line" (issue 26): the test capability in fixture/echo/ — its
 * descriptor, engine task and route, and nothing else of Folio edited — added to the module list here
 * becomes routed, documented in OpenAPI, reported by /v1/health, configured through its settings and
 * runnable on an engine thread.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi, type RunningApi } from '../../src/api.js';
import { MODULES } from '../../src/modules/index.js';
import { loadConfig } from '../../src/modules/config.js';
import { engineTasks } from '../../src/modules/engine.js';
import echo, { echoState } from './fixture/echo/module.js';

// The one line.
const modules = [...MODULES, echo];

let api: RunningApi;
let url: string;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-modules-'));

beforeAll(async () => {
  const env = { HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENGINE_WORKERS: '1', ECHO_PREFIX: 'hi:' };
  api = await buildApi({ config: loadConfig(env, modules), logger: pino({ level: 'silent' }), modules, withoutOffice: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await api?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a module added to the list', () => {
  it('is routed, and its route runs its engine task on an engine thread', async () => {
    const res = await fetch(`${url}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'abc' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { text: string; threadId: number };
    // ECHO_PREFIX reached the thread through the module's workerData.
    expect(body.text).toBe('hi:abc');
    expect(body.threadId).not.toBe(threadId);
  }, 60_000);

  it('has its operation and its tag in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as {
      tags: Array<{ name: string }>;
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    expect(doc.tags.map((t) => t.name)).toContain('echo');
    expect(doc.paths['/v1/echo']?.post?.tags).toEqual(['echo']);
  });

  it('reports its health entry', async () => {
    const health = (await (await fetch(`${url}/v1/health`)).json()) as { engines: Record<string, { status: string; prefix?: string }> };
    expect(health.engines.echo).toEqual({ status: 'healthy', prefix: 'hi:' });
  });

  it('has its settings read with every other: a bad value stops with one line naming it', () => {
    expect(() => loadConfig({ ECHO_PREFIX: 'Nope' }, modules)).toThrow(/^Invalid configuration: ECHO_PREFIX must be lower-case letters and a colon$/);
    expect((loadConfig({}, modules) as unknown as { echoPrefix: string }).echoPrefix).toBe('echo:');
  });

  it('is provisioned once and closed with the API', async () => {
    const closed = echoState.closed;
    const other = await buildApi({
      config: loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENGINE_WORKERS: '1' }, modules),
      logger: pino({ level: 'silent' }),
      modules,
      withoutOffice: true,
    });
    expect(other.modules.map((m) => m.id)).toContain('echo');
    await other.close();
    expect(echoState.closed).toBe(closed + 1);
  }, 120_000);
});

describe('the same folder without the line', () => {
  it('is not known to the configuration nor to the engine threads', () => {
    expect(() => loadConfig({ ECHO_PREFIX: 'Nope' })).not.toThrow();
    expect(engineTasks().taskFiles['echo.run']).toBeUndefined();
    expect(engineTasks(modules).taskFiles['echo.run']).toMatch(/fixture\/echo\/tasks\.js$/);
  });
});
