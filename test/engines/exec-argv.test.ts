/**
 * Engine threads start with require(esm) off: piscina require()s the task file before it import()s it, and on
 * Node 20.19+ require() of an ES module with top-level await (our worker entry) can abort the whole process with
 * a V8 fatal error instead of throwing (seen once in CI). With the flag, require() refuses the file before
 * evaluating it and piscina falls back to import(). And flags threads refuse (V8's, process-wide ones) are left
 * out instead of stopping the pool at start-up.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { EnginePool, engineExecArgv, workerExecArgv } from '../../src/engines/pool.js';
import { engineTasks } from '../../src/modules/engine.js';

/** Starts a thread with `execArgv` that require()s an ES module with top-level await; returns what it saw. */
async function requireTlaModule(execArgv: string[]): Promise<{ code: string | undefined; evaluated: boolean }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'folio-exec-argv-'));
  const file = path.join(dir, 'entry.mjs');
  writeFileSync(file, 'globalThis.evaluated = true;\nawait Promise.resolve();\nexport default () => 1;\n');
  const source = `const { parentPort } = require('node:worker_threads');
let code;
try { require(${JSON.stringify(file)}); } catch (e) { code = e.code; }
parentPort.postMessage({ code, evaluated: globalThis.evaluated === true });`;
  const worker = new Worker(source, { eval: true, execArgv });
  const [message] = (await Promise.all([new Promise((resolve) => worker.once('message', resolve)), new Promise((r) => worker.once('exit', r))])) as [
    { code: string | undefined; evaluated: boolean },
    unknown,
  ];
  return message;
}

describe('engine thread flags', () => {
  it('drop the API heap size and keep the other flags', () => {
    const argv = engineExecArgv(['--max-old-space-size=4096', '--enable-source-maps']);
    expect(argv).not.toContain('--max-old-space-size=4096');
    expect(argv).toContain('--enable-source-maps');
  });

  it('make require() refuse an ES module before evaluating it', async () => {
    const seen = await requireTlaModule(engineExecArgv([]));
    expect(seen.code).toBe('ERR_REQUIRE_ESM');
    expect(seen.evaluated).toBe(false);
  });

  it.runIf((process.features as { require_module?: boolean }).require_module === true)(
    'are needed: without them this Node links the ES module graph inside require() (where the fatal error came from)',
    async () => {
      const seen = await requireTlaModule([]);
      expect(seen.code).toBe('ERR_REQUIRE_ASYNC_MODULE');
    },
  );
});

describe('flags worker threads refuse', () => {
  it('are dropped, the rest kept in order, a flag and its value as a pair', () => {
    const { kept, dropped } = workerExecArgv(['--stack-trace-limit=50', '--enable-source-maps', '--title=folio', '--conditions', 'folio-test']);
    expect(kept).toEqual(['--enable-source-maps', '--conditions', 'folio-test']);
    expect(dropped).toEqual(['--stack-trace-limit=50', '--title=folio']);
  });

  it('do not stop the pool: it starts without them and runs a job (it threw at start-up before)', async () => {
    const pool = new EnginePool({
      workers: 1,
      queueSize: 1,
      timeoutMs: 60_000,
      memoryMb: 256,
      execArgv: ['--stack-trace-limit=50', ...process.execArgv],
      workerData: { ...engineTasks(), preloadEngines: false, trust: {}, urlFetchAllowlist: [], tsaOptional: true },
    });
    try {
      const out = await pool.run('convert.toDocx', { from: 'md', bytes: new TextEncoder().encode('# Title\n'), pageSize: 'A4' });
      expect(out.docx.length).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  }, 120_000);
});
