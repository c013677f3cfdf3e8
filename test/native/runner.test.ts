/**
 * The main thread's native runner (src/native/runner.ts): children asked for by a job are started and reaped
 * on the main thread and SIGKILLed when the job ends, so a job ended mid-run leaves neither a running child
 * nor a zombie. First the runner on its own (this thread plays the engine thread's part through the same
 * BroadcastChannel protocol), then through the engine pool with a real annotate job aborted while resvg runs.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isFolioError } from '../../src/errors.js';
import { EnginePool } from '../../src/engines/index.js';
import { engineTasks } from '../../src/modules/engine.js';
import { NativeRunner } from '../../src/native/runner.js';
import { runOnRunner } from '../../src/native/remote.js';
import { descendants } from '../adversarial/server.js';
import { templateDocx } from '../adversarial/generators.js';
import { heavySvg } from '../amplification/native-inputs.js';
import { processState, svgChildren } from './tree.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const limits = { timeoutMs: 60_000, maxOutputBytes: 1024 * 1024 };

/** Polls until `find` returns something (at most `ms`). */
async function waitFor<T>(find: () => T | undefined, ms: number): Promise<T | undefined> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
    const v = find();
    if (v !== undefined) return v;
  }
  return undefined;
}

describe('native runner', () => {
  const runner = new NativeRunner();
  afterAll(() => runner.close());

  it('runs a child for a job and answers with its output', async () => {
    runner.beginJob(1);
    const r = await runOnRunner(runner.channelName, 1, 'cat', [], { ...limits, input: Buffer.from('through the main thread') });
    runner.endJob(1);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe('through the main thread');
  });

  it('a job ended mid-run leaves no child: killed and reaped', async () => {
    runner.beginJob(2);
    const answer = runOnRunner(runner.channelName, 2, 'sleep', ['30'], { ...limits, input: new Uint8Array(0) });
    const pid = await waitFor(() => descendants(process.pid).find((d) => d.name === 'sleep' && processState(d.pid) !== 'Z')?.pid, 10_000);
    expect(pid).toBeDefined();
    runner.endJob(2);
    const r = await answer;
    expect(r.stopped).toBe('aborted');
    expect(r.signal).toBe('SIGKILL');
    // Reaped: no /proc entry at all (a zombie would still have one, in state Z).
    expect(processState(pid!)).toBeUndefined();
    expect(runner.running()).toBe(0);
  });

  it('work asked for by a job that has ended is refused, and nothing is started', async () => {
    const before = descendants(process.pid).length;
    const err = await runOnRunner(runner.channelName, 2, 'sleep', ['30'], { ...limits, input: new Uint8Array(0) }).catch((e: unknown) => e);
    expect(isFolioError(err) && err.code).toBe('SERVICE_UNAVAILABLE');
    expect(runner.running()).toBe(0);
    expect(descendants(process.pid).length).toBe(before);
  });
});

describe('engine pool: an annotate job aborted while resvg runs', () => {
  const pool = new EnginePool({
    workers: 1,
    queueSize: 2,
    timeoutMs: 60_000,
    memoryMb: 256,
    workerData: { ...engineTasks(), preloadEngines: false, trust: {}, urlFetchAllowlist: [], tsaOptional: true },
  });
  afterAll(() => pool.close());

  it('leaves no SVG child and no zombie once the job is over', async () => {
    const svg = `data:image/svg+xml;base64,${Buffer.from(heavySvg()).toString('base64')}`;
    const abort = new AbortController();
    const job = pool
      .run(
        'annotate.fill',
        { template: templateDocx(), fields: [{ id: 'name', type: 'image', value: svg }], strict: false, flatten: false },
        { signal: abort.signal },
      )
      .catch((e: unknown) => e);
    // The thread loads annotate from source first (seconds on a busy machine), then asks for the child.
    const child = await waitFor(() => svgChildren(process.pid)[0], 60_000);
    expect(child).toBeDefined();
    abort.abort();
    const err = await job;
    expect(isFolioError(err) && err.code).toBe('SERVICE_UNAVAILABLE');
    // Killed and reaped by this (the main) thread: gone from /proc, not a zombie (generous: a busy machine).
    expect(await waitFor(() => (processState(child!) === undefined ? true : undefined), 5_000)).toBe(true);
    expect(svgChildren(process.pid)).toEqual([]);
    // From source, tsx's esbuild service dies with the terminated thread as a zombie of its own: not ours.
    const zombies = descendants(process.pid).filter((d) => processState(d.pid) === 'Z' && d.name !== 'esbuild');
    expect(zombies).toEqual([]);
  }, 120_000);
});
