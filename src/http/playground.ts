/**
 * The playground page at `/`: the static assets that `npm run build:playground` (Vite, `playground/`) writes to
 * dist/playground, served with their content types and a strict Content-Security-Policy (same-origin scripts,
 * styles, workers and connections only; the telemetry ingest's origin when PLAYGROUND_INGEST_URL names one).
 * When the assets were not built, `/` answers a short page saying how to build them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FolioError } from '../errors.js';
import { sendError } from './envelope.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

/** dist/playground seen from src/http (tsx), dist/src/http (the build) or the working directory. */
function assetDirs(): string[] {
  const here = import.meta.dirname;
  return [path.resolve(here, '../../playground'), path.resolve(here, '../../dist/playground'), path.resolve(process.cwd(), 'dist/playground')];
}

function findAssets(dirs: string[]): string | undefined {
  return dirs.find((d) => fs.existsSync(path.join(d, 'index.html')) && fs.existsSync(path.join(d, 'assets')));
}

/** The telemetry ingest endpoint the page uses by default (PLAYGROUND_INGEST_URL), if it is a valid http(s) URL. */
export function playgroundIngestUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env.PLAYGROUND_INGEST_URL;
  if (!raw) return undefined;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

export function playgroundCsp(ingestUrl?: string): string {
  const connect = ["'self'", ...(ingestUrl ? [new URL(ingestUrl).origin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    `connect-src ${connect}`,
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Folio playground</title></head><body>
<h1>Folio playground</h1><p>The playground's assets are not built. Run <code>npm run build</code> (or <code>npm run build:playground</code>) and reload.</p>
<p>The API is at <a href="/v1/health">/v1/health</a>; its reference is at <a href="/docs">/docs</a>.</p></body></html>`;

export interface PlaygroundOptions {
  /** Where the built assets are (default: dist/playground); tests point elsewhere. */
  dir?: string;
  /** The telemetry endpoint the page uses by default (default: PLAYGROUND_INGEST_URL). */
  ingestUrl?: string;
}

export function playgroundRoutes(opts: PlaygroundOptions = {}) {
  return async (app: FastifyInstance) => {
    const dirs = opts.dir ? [path.resolve(opts.dir)] : assetDirs();
    const ingestUrl = opts.ingestUrl ?? playgroundIngestUrl();
    const csp = playgroundCsp(ingestUrl);
    const secure = (reply: FastifyReply) =>
      reply
        .header('Content-Security-Policy', csp)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Referrer-Policy', 'no-referrer')
        .header('Cross-Origin-Opener-Policy', 'same-origin');

    // A missing asset is an error like any other: the envelope (404 NOT_FOUND).
    const notFound = (request: FastifyRequest, reply: FastifyReply) =>
      sendError(request, reply, new FolioError('NOT_FOUND', 'No such playground asset'));
    const send = async (request: FastifyRequest, reply: FastifyReply, rel: string, cache: string) => {
      const dir = findAssets(dirs);
      if (!dir) {
        if (rel !== 'index.html') return notFound(request, reply);
        return secure(reply).code(200).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
      }
      const file = path.resolve(dir, rel);
      if (!file.startsWith(dir + path.sep)) return notFound(request, reply);
      let body: Buffer;
      try {
        body = await fs.promises.readFile(file);
      } catch {
        return notFound(request, reply);
      }
      return secure(reply)
        .code(200)
        .header('Cache-Control', cache)
        .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
        .send(body);
    };

    const hide = { schema: { hide: true } };
    app.get('/', hide, (req, reply) => send(req, reply, 'index.html', 'no-store'));
    // Vite names the assets by content hash: they never change under a name.
    app.get<{ Params: { file: string } }>('/assets/:file', hide, (req, reply) =>
      /^\w[\w.-]*$/.test(req.params.file)
        ? send(req, reply, path.join('assets', req.params.file), 'public, max-age=31536000, immutable')
        : notFound(req, reply),
    );
    app.get('/playground/config.json', hide, (_req, reply) =>
      secure(reply)
        .header('Cache-Control', 'no-store')
        .send({ ingestUrl: ingestUrl ?? null }),
    );
  };
}
