/**
 * The engine thread's start (src/engines/worker.ts): the warm-up documents (src/engines/warm-up.ts) take the
 * paths real requests take (a failure there is swallowed at start-up, so it would only show as a cold
 * thread); a pool whose threads warm up still starts and converts; a task kind's modules are loaded on its
 * first job, before that job's time budget starts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isFolioError } from '../../src/errors.js';
import { EnginePool } from '../../src/engines/index.js';
import { engineTasks } from '../../src/modules/engine.js';
import { warmUpHtml, warmUpMarkdown } from '../../src/engines/warm-up.js';
import { htmlToDocx, markdownToDocx } from '../../src/convert/index.js';
import { parseMarkdown } from '../../src/convert/markdown.js';
import { unpack } from '../support/unpack.js';

describe('engine warm-up documents', () => {
  it('the Markdown takes the direct token path and covers the report block kinds', () => {
    for (const n of [0, 1, 29]) {
      const md = warmUpMarkdown(n);
      expect(parseMarkdown(md).rawHtml).toBe(false);
      const { document, files } = unpack(markdownToDocx(md));
      for (const tag of ['<w:tbl>', '<w:hyperlink', '<w:numPr>', '<w:footnoteReference', '<w:br/>']) expect(document).toContain(tag);
      expect(files['word/footnotes.xml']).toBeDefined();
      expect(files['word/numbering.xml']).toBeDefined();
    }
  });

  it('the HTML converts with its table and lists', () => {
    const { document } = unpack(htmlToDocx(warmUpHtml(3)));
    expect(document).toContain('<w:tbl>');
    expect(document).toContain('<w:numPr>');
  });
});

describe('engine pool with warm-up', () => {
  const pool = new EnginePool({
    workers: 1,
    queueSize: 2,
    timeoutMs: 30_000,
    memoryMb: 256,
    workerData: { ...engineTasks(), preloadEngines: true, warmUp: true, trust: {}, urlFetchAllowlist: [], tsaOptional: true },
  });
  afterAll(() => pool.close());

  it('starts its thread and converts Markdown', async () => {
    const out = await pool.run('convert.toDocx', { from: 'md', bytes: new TextEncoder().encode('# Title\n\nText.\n'), pageSize: 'A4' });
    expect(unpack(out.docx).document).toContain('Title');
    expect(pool.status().workers).toBe(1);
  }, 120_000);
});

describe('engine modules loaded per task kind', () => {
  // A budget shorter than loading the sign and verify modules from source on a loaded host: the first job
  // of each kind is answered by its engine, not by the pool's timeout.
  const pool = new EnginePool({
    workers: 1,
    queueSize: 4,
    timeoutMs: 400,
    memoryMb: 256,
    workerData: { ...engineTasks(), preloadEngines: true, trust: {}, urlFetchAllowlist: [], tsaOptional: true },
  });
  afterAll(() => pool.close());

  it('the first job of a kind is answered by its engine, module loading outside its budget', async () => {
    const notAPdf = new TextEncoder().encode('not a pdf');
    for (const job of [() => pool.run('verify.pdf', { bytes: notAPdf }), () => pool.run('annotate.fields', { template: notAPdf })]) {
      const e = await job().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isFolioError(e)).toBe(true);
      expect((e as { code: string }).code).not.toBe('CONVERSION_TIMEOUT');
      expect((e as { code: string }).code).not.toBe('INTERNAL_ERROR');
    }
    expect(pool.status().timeouts).toBe(0);
  }, 120_000);
});
