/**
 * What POST /v1/sign hands the engine thread (issue 26): the request checked and parsed once — Dates, the
 * resolved level, the trimmed name — and the document bytes moved to the thread rather than copied when the
 * route owns their buffer whole; a document in Node's shared pool (small base64 bodies decode into it) is
 * copied, never detached. A file that is neither PDF nor DOCX is refused before any engine job.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { makePdf, postSign, signBody } from './helpers.js';

let t: TestApi;
let run: { mockRestore(): void } | undefined;
const seen: Array<{ input: any; options: any; bufferBefore: number; buffer: ArrayBufferLike }> = [];

beforeAll(async () => {
  t = await startTestApi();
  const pool = t.services.enginePool;
  const original = pool.run.bind(pool);
  run = vi.spyOn(pool, 'run').mockImplementation(async (task: any, input: any, options: any) => {
    const entry = { input, options, bufferBefore: input.document?.buffer.byteLength, buffer: input.document?.buffer };
    if (task === 'sign.seal') seen.push(entry);
    return original(task, input, options);
  });
});
afterAll(async () => {
  run?.mockRestore();
  await t?.close();
});

describe('the sign route hands over', () => {
  it('a document it owns by transfer: the buffer is detached on the main thread once the job has it', async () => {
    const pdf = await makePdf(40);
    expect(pdf.length).toBeGreaterThan(8192);
    seen.length = 0;
    const res = await postSign(t, signBody(pdf, { signer: { name: '  Ada Lovelace ', email: 'ada@example.com' } }));
    expect(res.status).toBe(200);
    const [call] = seen;
    expect(call!.bufferBefore).toBe(pdf.length);
    expect(call!.options.transfer).toEqual([call!.buffer]);
    expect(call!.buffer.byteLength).toBe(0); // moved: nothing left on this side
    // Checked and parsed where the request came in.
    expect(call!.input.signer.name).toBe('Ada Lovelace');
    expect(call!.input.auditTrail.map((e: { timestamp: Date }) => e.timestamp)).toEqual([
      new Date('2026-11-20T09:15:00Z'),
      new Date('2026-11-20T08:16:30.250Z'),
    ]);
    expect(call!.input.level).toEqual({ level: 'B-B', asked: false });
  });

  it("a small document in Node's shared buffer pool by copy", async () => {
    const tiny = new TextEncoder().encode(
      '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
        '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    );
    seen.length = 0;
    const res = await postSign(t, signBody(tiny));
    expect(res.status).toBe(200);
    const [call] = seen;
    expect(call!.options.transfer).toEqual([]);
    expect(call!.buffer.byteLength).toBeGreaterThan(tiny.length); // the pool's slab, still whole
  });

  it('nothing for a file that is neither a PDF nor a DOCX', async () => {
    seen.length = 0;
    const res = await postSign(t, signBody(new TextEncoder().encode('plain text, not a document')));
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('INVALID_FILE_FORMAT');
    expect(seen).toHaveLength(0);
  });
});
