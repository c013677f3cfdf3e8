/**
 * The engine threads' start-up warm-up (src/engines/warm-up.ts): its documents take the paths real requests
 * take (a failure there is swallowed at start-up, so it would only show as a cold thread), and a pool whose
 * threads warm up still starts and converts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EnginePool } from '../../src/engines/index.js';
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
    workerData: { preloadEngines: true, warmUp: true, trust: {}, urlFetchAllowlist: [], tsaOptional: true },
  });
  afterAll(() => pool.close());

  it('starts its thread and converts Markdown', async () => {
    const out = await pool.run('convert.toDocx', { from: 'md', bytes: new TextEncoder().encode('# Title\n\nText.\n'), pageSize: 'A4' });
    expect(unpack(out).document).toContain('Title');
    expect(pool.status().workers).toBe(1);
  }, 120_000);
});
