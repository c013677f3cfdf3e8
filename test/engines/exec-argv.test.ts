/**
 * Engine threads start with require(esm) off: piscina require()s the task file before it import()s it, and on
 * Node 20.19+ require() of an ES module with top-level await (our worker entry) can abort the whole process with
 * a V8 fatal error instead of throwing (seen once in CI). With the flag, require() refuses the file before
 * evaluating it and piscina falls back to import().
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { engineExecArgv } from '../../src/engines/pool.js';

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
