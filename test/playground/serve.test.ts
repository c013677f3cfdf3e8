/**
 * src/http/playground.ts on its own: the page and its assets with their content types and the CSP, the page
 * that says to build when the assets are missing, no way out of the assets folder, and the page's config.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playgroundCsp, playgroundIngestUrl, playgroundRoutes } from '../../src/http/playground.js';

let built: string;
let empty: string;
const apps: FastifyInstance[] = [];

async function appWith(opts: Parameters<typeof playgroundRoutes>[0]): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(playgroundRoutes(opts));
  apps.push(app);
  return app;
}

beforeAll(() => {
  built = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-pg-'));
  fs.mkdirSync(path.join(built, 'assets'));
  fs.writeFileSync(path.join(built, 'index.html'), '<!doctype html><title>pg</title><script type="module" src="/assets/index-1.js"></script>');
  fs.writeFileSync(path.join(built, 'assets/index-1.js'), 'export {};');
  fs.writeFileSync(path.join(built, 'assets/pdf.worker.min-2.mjs'), 'export {};');
  fs.writeFileSync(path.join(built, 'assets/index-3.css'), 'body{}');
  fs.writeFileSync(path.join(os.tmpdir(), 'folio-pg-secret.txt'), 'S3CR3T-CONTENT');
  empty = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-pg-empty-'));
});

afterAll(async () => {
  for (const app of apps) await app.close();
  fs.rmSync(built, { recursive: true, force: true });
  fs.rmSync(empty, { recursive: true, force: true });
  fs.rmSync(path.join(os.tmpdir(), 'folio-pg-secret.txt'), { force: true });
});

describe('the playground routes', () => {
  it('serve the page and its assets with their content types, a strict CSP and immutable caching', async () => {
    const app = await appWith({ dir: built });
    const page = await app.inject('/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('/assets/index-1.js');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const js = await app.inject('/assets/index-1.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await app.inject('/assets/pdf.worker.min-2.mjs')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await app.inject('/assets/index-3.css')).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answer 404 for unknown assets and never leave the assets folder', async () => {
    const app = await appWith({ dir: built });
    expect((await app.inject('/assets/nope.js')).statusCode).toBe(404);
    for (const url of [
      '/assets/..%2f..%2ffolio-pg-secret.txt',
      '/assets/..%2fassets%2findex-1.js',
      '/assets/%2e%2e%2f%2e%2e%2ffolio-pg-secret.txt',
    ]) {
      const r = await app.inject(url);
      expect(r.statusCode, url).toBe(404);
      expect(r.body).not.toContain('S3CR3T-CONTENT');
    }
    // URL parsing resolves dot segments before routing: these land on the page itself, never outside.
    for (const url of ['/assets/%2e%2e', '/assets/..', '/assets/../../folio-pg-secret.txt']) {
      const r = await app.inject(url);
      expect(r.body, url).not.toContain('S3CR3T-CONTENT');
    }
  });

  it('say how to build when the assets are missing (never a crash)', async () => {
    const app = await appWith({ dir: empty });
    const page = await app.inject('/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('npm run build');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect((await app.inject('/assets/index-1.js')).statusCode).toBe(404);
  });

  it('give the page its telemetry endpoint and allow that origin in the CSP', async () => {
    const app = await appWith({ dir: built, ingestUrl: 'http://127.0.0.1:8081/v1/collect' });
    const cfg = await app.inject('/playground/config.json');
    expect(cfg.json()).toEqual({ ingestUrl: 'http://127.0.0.1:8081/v1/collect' });
    expect((await app.inject('/')).headers['content-security-policy']).toContain("connect-src 'self' http://127.0.0.1:8081");
    expect((await (await appWith({ dir: built, ingestUrl: undefined })).inject('/playground/config.json')).statusCode).toBe(200);
    expect(playgroundIngestUrl({ PLAYGROUND_INGEST_URL: 'javascript:alert(1)' })).toBeUndefined();
    expect(playgroundIngestUrl({ PLAYGROUND_INGEST_URL: 'not a url' })).toBeUndefined();
    expect(playgroundIngestUrl({})).toBeUndefined();
    expect(playgroundCsp()).toContain("connect-src 'self';");
  });
});
