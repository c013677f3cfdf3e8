/**
 * The API app, the engine threads, the OpenAPI tags, /v1/health and the configuration are assembled from the
 * one module list (src/modules/index.ts), and a module whose provisioning says it cannot serve registers no
 * route, operation or tag.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi, type RunningApi } from '../../src/api.js';
import { joinSettings, Setting, settingVariable } from '../../src/config/index.js';
import type { TaskFile } from '../../src/engines/tasks.js';
import type { Module } from '../../src/http/capability.js';
import { MODULES } from '../../src/modules/index.js';
import { configSchema, loadConfig } from '../../src/modules/config.js';
import { engineTasks } from '../../src/modules/engine.js';
import echo, { echoState } from './fixture/echo/module.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LIST: readonly Module[] = MODULES;

interface OpenApi {
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, { tags?: string[] }>>;
}

async function serve(modules: readonly Module[]): Promise<{ api: RunningApi; url: string; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-modules-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENGINE_WORKERS: '1' }, modules);
  const api = await buildApi({ config, logger: pino({ level: 'silent' }), modules, withoutOffice: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  return { api, url: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`, dataDir };
}

const operationTags = (doc: OpenApi) => new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])));

describe('the module list', () => {
  it('names each module once, and every module with routes has an OpenAPI tag (merge included)', () => {
    const ids = MODULES.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    const routed = LIST.filter((m) => m.routes);
    expect(routed.map((m) => m.id)).toEqual(['auth', 'convert', 'sign', 'annotate', 'verify', 'merge']);
    for (const m of routed) expect(m.tag?.name, m.id).toBeTruthy();
  });

  it('gives every engine task one tasks file, which has its handler', async () => {
    const { taskFiles, preloadFiles } = engineTasks();
    const declared = LIST.flatMap((m) => m.tasks?.names ?? []);
    expect(Object.keys(taskFiles).sort()).toEqual([...declared].sort());
    expect(Object.keys(taskFiles)).toEqual(
      expect.arrayContaining(['http.parseJson', 'convert.toDocx', 'sign.seal', 'verify.pdf', 'merge.pdfs', 'preview.pageSizes']),
    );
    for (const [task, file] of Object.entries(taskFiles)) {
      const loaded = (await import(file)) as TaskFile;
      expect(typeof (loaded.handlers as Record<string, unknown>)[task], task).toBe('function');
    }
    // Engine threads load the Markdown/HTML path at start (and warm it up); nothing else.
    expect(preloadFiles).toEqual([taskFiles['convert.toDocx']]);
  }, 60_000);

  it('refuses two modules serving one task', () => {
    const twice: Module = { id: 'again', tasks: { file: 'file:///nowhere.js', names: LIST.find((m) => m.id === 'merge')!.tasks!.names } };
    expect(() => engineTasks([...MODULES, twice])).toThrow(/merge\.pdfs is served by two modules/);
  });

  it('joins every module’s settings into one schema, each variable documented in the README', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const variables = Object.values(configSchema().properties).map((s) => settingVariable(s)!);
    expect(new Set(variables).size).toBe(variables.length);
    for (const v of ['PORT', 'DATABASE_URL', 'TSA_URL', 'TRUST_ANCHORS', 'PREVIEW_MEMORY_MB', 'ADMIN_TOKEN']) expect(variables).toContain(v);
    for (const v of variables) expect(readme, `README documents ${v}`).toContain(`\`${v}\``);
  });

  it('refuses two modules declaring one variable', () => {
    const clash = Type.Object({ other: Setting.integer('PORT', { default: 1, minimum: 0, maximum: 9 }) });
    expect(() =>
      joinSettings([
        { owner: 'core', settings: configSchema() },
        { owner: 'clash', settings: clash },
      ]),
    ).toThrow(/clash and core both declare the variable PORT/);
  });
});

describe('the app built from the list', () => {
  let served: Awaited<ReturnType<typeof serve>>;
  let doc: OpenApi;
  beforeAll(async () => {
    served = await serve(MODULES);
    doc = (await (await fetch(`${served.url}/openapi.json`)).json()) as OpenApi;
  }, 120_000);
  afterAll(async () => {
    await served?.api.close();
    if (served) fs.rmSync(served.dataDir, { recursive: true, force: true });
  });

  it('has the tags of the modules serving here, each used by operations, and no operation outside them', () => {
    const expected = ['health', ...served.api.modules.flatMap((m) => (m.tag ? [m.tag.name] : []))];
    expect(doc.tags.map((t) => t.name)).toEqual(expected);
    expect(expected).toEqual(['health', 'auth', 'convert', 'sign', 'annotate', 'verify', 'merge']);
    const used = operationTags(doc);
    expect([...used].sort()).toEqual([...expected].sort());
    expect(doc.paths['/v1/merge']?.post?.tags).toEqual(['merge']);
  });

  it('reports health from the shared services and the modules provisioned', async () => {
    const health = (await (await fetch(`${served.url}/v1/health`)).json()) as { engines: Record<string, unknown> };
    // Without REDIS_URL and with the office module left out: only the engine pool.
    expect(Object.keys(health.engines)).toEqual(['enginePool']);
    expect(served.api.services.engines.map((e) => e.name)).toEqual(['enginePool']);
  });

  it('answers through the routes and the engine tasks the modules declared', async () => {
    const res = await fetch(`${served.url}/v1/auth/register?email=nobody`);
    expect(res.status).toBe(400);
    expect(
      await served.api.services.enginePool.run('preview.pageSizes', { pdf: new Uint8Array(0), pages: [1] }).catch((e: { code: string }) => e.code),
    ).not.toBe('INTERNAL_ERROR');
  }, 60_000);
});

describe('a module whose provisioning says it cannot serve', () => {
  let served: Awaited<ReturnType<typeof serve>>;
  let doc: OpenApi;
  beforeAll(async () => {
    echoState.available = false;
    // Sign without a signing identity, as an instance that has none would say.
    const modules = [...LIST.map((m) => (m.id === 'sign' ? { ...m, provision: async () => ({ available: false }) } : m)), echo];
    served = await serve(modules);
    doc = (await (await fetch(`${served.url}/openapi.json`)).json()) as OpenApi;
  }, 120_000);
  afterAll(async () => {
    echoState.available = true;
    await served?.api.close();
    if (served) fs.rmSync(served.dataDir, { recursive: true, force: true });
  });

  it('registers no route, no operation and no tag', async () => {
    expect(served.api.modules.map((m) => m.id)).not.toContain('sign');
    expect(served.api.modules.map((m) => m.id)).not.toContain('echo');
    expect(doc.tags.map((t) => t.name)).not.toContain('sign');
    expect(doc.tags.map((t) => t.name)).not.toContain('echo');
    expect(operationTags(doc).has('sign')).toBe(false);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/sign') || p === '/v1/echo')).toEqual([]);
    expect((await fetch(`${served.url}/v1/sign`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${served.url}/v1/echo`, { method: 'POST' })).status).toBe(404);
    // The others still serve.
    expect(doc.paths['/v1/verify']?.post?.tags).toEqual(['verify']);
  });
});
