/**
 * Bytes the route owns cross to the engine thread by transfer, not by copy (EnginePool.run's `transfer`):
 * the upload of convert (md→docx, docx→md), verify (multipart and JSON) and annotate (JSON) is moved, so
 * the route's view of it is empty once the job was posted. Asserted on the real API by recording each job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { taggedPdf } from '../merge/helpers.js';

let t: TestApi;
interface Seen {
  task: string;
  moved: number;
  inputBytesAfter: number[];
}
let seen: Seen[] = [];

beforeAll(async () => {
  t = await startTestApi();
  const pool = t.services.enginePool;
  const run = pool.run.bind(pool);
  pool.run = (async (task: string, input: Record<string, unknown>, options: { transfer?: ArrayBuffer[] } = {}) => {
    const views = Object.values(input).filter((v): v is Uint8Array => v instanceof Uint8Array);
    // Counted before the job is posted: a moved buffer is empty (detached) here afterwards.
    const moved = (options.transfer ?? []).reduce((n, b) => n + b.byteLength, 0);
    try {
      return await (run as (...a: unknown[]) => Promise<unknown>)(task, input, options);
    } finally {
      seen.push({ task, moved, inputBytesAfter: views.map((v) => v.byteLength) });
    }
  }) as typeof pool.run;
});
afterAll(async () => {
  await t?.close();
});

const upload = (name: string, bytes: Uint8Array | string) => {
  const fd = new FormData();
  fd.append('file', new Blob([typeof bytes === 'string' ? bytes : new Uint8Array(bytes)]), name);
  return fd;
};
const post = (path: string, body: FormData | string) =>
  fetch(
    `${t.url}${path}`,
    authed(t, { method: 'POST', body, ...(typeof body === 'string' ? { headers: { 'content-type': 'application/json' } } : {}) }),
  );

describe('uploads are moved to engine threads', () => {
  it('convert md→docx and docx→md', async () => {
    seen = [];
    const markdown = `# Report\n\n${'A paragraph of text. '.repeat(5000)}\n`;
    const docx = await post('/v1/convert?from=md&to=docx', upload('a.md', markdown));
    expect(docx.status).toBe(200);
    const docxBytes = new Uint8Array(await docx.arrayBuffer());
    const md = await post('/v1/convert?to=md', upload('a.docx', docxBytes));
    expect(md.status).toBe(200);
    expect(seen.map((s) => s.task)).toEqual(['convert.toDocx', 'convert.fromDocx']);
    expect(seen[0]!.moved).toBeGreaterThanOrEqual(markdown.length);
    expect(seen[1]!.moved).toBeGreaterThanOrEqual(docxBytes.length);
    for (const s of seen) expect(s.inputBytesAfter).toEqual([0]);
  });

  it('verify, multipart and JSON', async () => {
    seen = [];
    // Past 4 KB: smaller buffers come from Node's shared pool and are copied (a pool is never moved).
    const pdf = await taggedPdf('Verify', 30);
    expect(pdf.length).toBeGreaterThan(8192);
    expect((await post('/v1/verify', upload('a.pdf', pdf))).status).toBe(200);
    expect((await post('/v1/verify', JSON.stringify({ document: { base64: Buffer.from(pdf).toString('base64') } }))).status).toBe(200);
    expect(seen.map((s) => s.task)).toEqual(['verify.pdf', 'verify.pdf']);
    for (const s of seen) {
      expect(s.moved).toBeGreaterThanOrEqual(pdf.length);
      expect(s.inputBytesAfter).toEqual([0]);
    }
  });

  it('annotate/fields (JSON)', async () => {
    const docx = await post('/v1/convert?from=md&to=docx', upload('t.md', '# Template\n\nHello {{name}}\n'));
    const template = Buffer.from(await docx.arrayBuffer());
    seen = [];
    const res = await post('/v1/annotate/fields', JSON.stringify({ document: { base64: template.toString('base64') } }));
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ task: 'annotate.fields', moved: template.length, inputBytesAfter: [0] }]);
  });
});
