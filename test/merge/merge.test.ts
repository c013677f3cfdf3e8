/**
 * POST /v1/merge over HTTP (engine pool, no office engine): order and page count, the text of every page,
 * the outline and page labels read back by qpdf, 50 inputs, failing inputs named by index and file name,
 * the 25 MB sum, signed inputs announced in headers, auth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { signMinimal } from '../sign/helpers.js';
import { encryptWithQpdf, linkedPdf, mergeJson, mergeMultipart, pageTexts, pdfinfoPages, qpdfJson, qpdfObjects, taggedPdf } from './helpers.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

describe('POST /v1/merge', () => {
  it('merges multipart inputs in order: page count, text of each page, outline and page labels', async () => {
    const a = await taggedPdf('Alpha', 2);
    const b = await taggedPdf('Bravo', 3);
    const c = await taggedPdf('Charlie', 1);
    const res = await mergeMultipart(t, [
      { bytes: a, name: 'alpha.pdf' },
      { bytes: b, name: 'bravo.pdf' },
      { bytes: c, name: 'charlie.pdf' },
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('x-folio-pages')).toBe('6');
    expect(res.headers.get('warning')).toBeNull();
    const pdf = await bytesOf(res);
    expect(pdfinfoPages(pdf)).toBe(6);
    const texts = pageTexts(pdf).map((s) => s.trim());
    expect(texts).toEqual(['Alpha page 1', 'Alpha page 2', 'Bravo page 1', 'Bravo page 2', 'Bravo page 3', 'Charlie page 1']);
    const json = qpdfJson(pdf);
    expect(json.outlines.map((o) => [o.title, o.destpageposfrom1])).toEqual([
      ['alpha.pdf', 1],
      ['bravo.pdf', 3],
      ['charlie.pdf', 6],
    ]);
    expect(json.pagelabels.map((l) => [l.index, l.label['/S']])).toEqual([
      [0, '/D'],
      [2, '/D'],
      [5, '/D'],
    ]);
  });

  it("keeps each input's own outline beneath its entry, with titles and label prefixes from JSON", async () => {
    const first = await mergeMultipart(t, [
      { bytes: await taggedPdf('Intro', 1), name: 'intro.pdf' },
      { bytes: await taggedPdf('Body', 2), name: 'body.pdf' },
    ]);
    expect(first.status).toBe(200);
    const withOutline = await bytesOf(first);
    const res = await mergeJson(t, {
      documents: [
        { base64: Buffer.from(await taggedPdf('Cover', 1)).toString('base64'), fileName: 'cover.pdf', labelPrefix: 'C-' },
        { base64: Buffer.from(withOutline).toString('base64'), title: 'Report – Ünïcode', labelPrefix: 'R-' },
      ],
    });
    expect(res.status).toBe(200);
    const pdf = await bytesOf(res);
    expect(pageTexts(pdf).map((s) => s.trim())).toEqual(['Cover page 1', 'Intro page 1', 'Body page 1', 'Body page 2']);
    const json = qpdfJson(pdf);
    expect(json.outlines.map((o) => o.title)).toEqual(['cover.pdf', 'Report – Ünïcode']);
    expect(json.outlines[1]!.destpageposfrom1).toBe(2);
    expect(json.outlines[1]!.kids.map((k) => [k.title, k.destpageposfrom1])).toEqual([
      ['intro.pdf', 2],
      ['body.pdf', 3],
    ]);
    expect(json.pagelabels.map((l) => [l.index, l.label['/P']])).toEqual([
      [0, 'u:C-'],
      [1, 'u:R-'],
    ]);
  });

  it("keeps links between an input's pages pointing at the merged pages, with no orphan page copies", async () => {
    const res = await mergeMultipart(t, [
      { bytes: await taggedPdf('Lead', 1), name: 'lead.pdf' },
      { bytes: await linkedPdf('Linked'), name: 'linked.pdf' },
    ]);
    expect(res.status).toBe(200);
    const pdf = await bytesOf(res);
    const { pages, objects } = qpdfObjects(pdf);
    expect(pages).toHaveLength(3);
    const annots = objects[`obj:${pages[1]}`]!.value!['/Annots'] as string[];
    expect(annots).toHaveLength(1);
    const dest = objects[`obj:${annots[0]}`]!.value!['/Dest'] as string[];
    expect(dest[0]).toBe(pages[2]);
    const pageObjects = Object.values(objects).filter((o) => o.value?.['/Type'] === '/Page');
    expect(pageObjects).toHaveLength(3);
  });

  it('leaves the outline and the labels out when asked', async () => {
    const res = await mergeMultipart(
      t,
      [
        { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
        { bytes: await taggedPdf('B', 1), name: 'b.pdf' },
      ],
      { outline: 'false', pageLabels: 'false' },
    );
    expect(res.status).toBe(200);
    const json = qpdfJson(await bytesOf(res));
    expect(json.outlines).toEqual([]);
    expect(json.pagelabels).toEqual([]);
  });

  it('merges 50 inputs', async () => {
    const files = await Promise.all(Array.from({ length: 50 }, async (_, i) => ({ bytes: await taggedPdf(`Doc${i}`, 1), name: `doc${i}.pdf` })));
    const res = await mergeMultipart(t, files);
    expect(res.status).toBe(200);
    const pdf = await bytesOf(res);
    expect(pdfinfoPages(pdf)).toBe(50);
    expect(pageTexts(pdf).map((s) => s.trim())).toEqual(files.map((_, i) => `Doc${i} page 1`));
    expect(qpdfJson(pdf).outlines.map((o) => o.title)).toEqual(files.map((f) => f.name));
  });

  it('refuses 51 inputs and a single one (400)', async () => {
    const one = await taggedPdf('X', 1);
    const res = await mergeMultipart(
      t,
      Array.from({ length: 51 }, (_, i) => ({ bytes: one, name: `x${i}.pdf` })),
    );
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('VALIDATION_ERROR');
    const single = await mergeMultipart(t, [{ bytes: one, name: 'x.pdf' }]);
    expect(single.status).toBe(400);
  });

  it('names an encrypted input by index and file name (422)', async () => {
    const enc = encryptWithQpdf(await taggedPdf('Secret', 1));
    const res = await mergeMultipart(t, [
      { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
      { bytes: enc, name: 'secret.pdf' },
    ]);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(body.details).toEqual([{ field: 'documents.1', issue: expect.stringMatching(/^secret\.pdf: .*encrypted/) }]);
  });

  it('names a damaged input by index and file name (422) and a non-PDF one (400)', async () => {
    const broken = new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
    const res = await mergeMultipart(t, [
      { bytes: broken, name: 'broken.pdf' },
      { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
    ]);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.details[0].field).toBe('documents.0');
    expect(body.details[0].issue).toMatch(/^broken\.pdf: /);
    expect(body.message).toContain('input 0 (broken.pdf)');
    const text = await mergeMultipart(t, [
      { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
      { bytes: new TextEncoder().encode('just text'), name: 'notes.txt' },
    ]);
    expect(text.status).toBe(400);
    expect((await text.json()).details[0]).toEqual({ field: 'documents.1', issue: 'notes.txt: not a PDF or DOCX file' });
  });

  it('applies the 25 MB limit to the sum of the inputs (413)', async () => {
    const big = new Uint8Array(13 * 1024 * 1024);
    big.set(new TextEncoder().encode('%PDF-1.7\n'));
    const res = await mergeMultipart(t, [
      { bytes: big, name: 'one.pdf' },
      { bytes: big, name: 'two.pdf' },
    ]);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('FILE_TOO_LARGE');
    const b64 = Buffer.from(big).toString('base64');
    const json = await mergeJson(t, { documents: [{ base64: b64 }, { base64: b64 }] });
    expect(json.status).toBe(413);
  });

  it('says in Warning and X-Folio-Warnings that a signed input lost its signature', async () => {
    const signed = (await signMinimal(t.services.signing!, await taggedPdf('Signed', 1))).pdf;
    const res = await mergeMultipart(t, [
      { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
      { bytes: signed, name: 'signed.pdf' },
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toMatch(/input 1 \(signed\.pdf\) is signed; .*signature is not valid/);
    expect(res.headers.get('warning')).toMatch(/^299 folio "input 1 \(signed\.pdf\) is signed/);
    const merged = await bytesOf(res);
    const texts = pageTexts(merged).map((s) => s.trim());
    expect(texts[0]).toBe('A page 1');
    expect(texts[1]).toContain('Signed page 1');
    // No stale signature dictionary is carried over for a validator to report as a broken signature.
    expect(Buffer.from(merged).includes('/ByteRange')).toBe(false);
  });

  it('holds file names to 255 characters, multipart and JSON alike (400 beyond, naming the input)', async () => {
    const pdf = await taggedPdf('Named', 1);
    const longest = `${'é'.repeat(251)}.pdf`;
    const ok = await mergeMultipart(t, [
      { bytes: pdf, name: longest },
      { bytes: pdf, name: 'b.pdf' },
    ]);
    expect(ok.status).toBe(200);
    expect(qpdfJson(await bytesOf(ok)).outlines.map((o) => o.title)).toEqual([longest, 'b.pdf']);

    const tooLong = `${'x'.repeat(100_000)}.pdf`;
    const multipart = await mergeMultipart(t, [
      { bytes: pdf, name: 'a.pdf' },
      { bytes: pdf, name: tooLong },
    ]);
    expect(multipart.status).toBe(400);
    const m = (await multipart.json()) as { code: string; details: Array<{ field: string; issue: string }> };
    expect(m.code).toBe('VALIDATION_ERROR');
    expect(m.details).toEqual([{ field: 'files.1.fileName', issue: 'must NOT have more than 255 characters' }]);

    const b64 = Buffer.from(pdf).toString('base64');
    const json = await mergeJson(t, { documents: [{ base64: b64 }, { base64: b64, fileName: `${'x'.repeat(252)}.pdf` }] });
    expect(json.status).toBe(400);
    const j = (await json.json()) as { code: string; details: Array<{ field: string; issue: string }> };
    expect(j.code).toBe('VALIDATION_ERROR');
    expect(j.details).toContainEqual({ field: 'documents.1.fileName', issue: 'must NOT have more than 255 characters' });
  });

  it('decodes every documents[].base64 of a large JSON body on the body thread, not the event loop', async () => {
    // Each input past 256 KB of base64 with the rest of the body: the body is parsed off the event loop.
    const padded = async (tag: string) => {
      const pdf = await taggedPdf(tag, 1);
      return Buffer.concat([Buffer.from(pdf), Buffer.from(`\n%${'x'.repeat(200_000)}\n`)]);
    };
    const docs = [await padded('One'), await padded('Two'), await padded('Three')];
    const before = t.services.bodyPool.status().completed;
    // What the body thread answers: the parsed body and the bytes of every input it decoded.
    const pool = t.services.bodyPool;
    const run = pool.run.bind(pool);
    const answers: Array<{ decoded: Array<{ at: unknown[]; bytes: Uint8Array }> }> = [];
    const decodedSizes: Array<[unknown[], number]> = [];
    pool.run = (async (...args: Parameters<typeof run>) => {
      const out = await run(...args);
      const answer = out as (typeof answers)[number];
      answers.push(answer);
      decodedSizes.push(...answer.decoded.map((d): [unknown[], number] => [d.at, d.bytes.length]));
      return out;
    }) as typeof pool.run;
    let res: Response;
    try {
      res = await mergeJson(t, { documents: docs.map((d, i) => ({ base64: d.toString('base64'), fileName: `${i}.pdf` })) });
    } finally {
      pool.run = run;
    }
    expect(res.status, await res.clone().text()).toBe(200);
    expect(t.services.bodyPool.status().completed).toBe(before + 1);
    expect(decodedSizes).toEqual(docs.map((d, i) => [['documents', i, 'base64'], d.length]));
    // Those buffers were then moved on to the merge engine's thread, not copied: empty here now.
    expect(answers[0]!.decoded.map((d) => d.bytes.byteLength)).toEqual([0, 0, 0]);
    expect(
      pageTexts(await bytesOf(res))
        .map((s) => s.trim())
        .slice(0, 3),
    ).toEqual(['One page 1', 'Two page 1', 'Three page 1']);

    // A document that does not decode is named as before, after the body thread tried it.
    const bad = await mergeJson(t, { documents: [{ base64: docs[0]!.toString('base64') }, { base64: '!'.repeat(300_000) }] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details).toEqual([{ field: 'documents.1.base64', issue: 'invalid base64' }]);
  });

  it('checks the options before any input is fetched (pdfa refused before a URL is tried)', async () => {
    const res = await mergeJson(t, {
      documents: [{ url: 'http://127.0.0.1:1/a.pdf' }, { url: 'http://127.0.0.1:1/b.pdf' }],
      options: { pdfa: '2b' },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_CONVERSION', details: [{ field: 'pdfa', issue: 'not supported by merge' }] });
  });

  it('validates the multipart form with its schema: the count, unknown fields and option values', async () => {
    const pdf = await taggedPdf('A', 1);
    const one = await mergeMultipart(t, [{ bytes: pdf, name: 'a.pdf' }]);
    expect(one.status).toBe(400);
    expect((await one.json()).details).toEqual([{ field: 'files', issue: 'must NOT have fewer than 2 items' }]);
    const fields = await mergeMultipart(
      t,
      [
        { bytes: pdf, name: 'a.pdf' },
        { bytes: pdf, name: 'b.pdf' },
      ],
      { outline: 'yes', colour: 'red' },
    );
    expect(fields.status).toBe(400);
    expect((await fields.json()).details).toEqual(
      expect.arrayContaining([
        { field: 'colour', issue: 'unknown property' },
        { field: 'outline', issue: 'must be equal to one of the allowed values' },
      ]),
    );
  });

  it('refuses pdfa (400 UNSUPPORTED_CONVERSION)', async () => {
    const res = await mergeMultipart(
      t,
      [
        { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
        { bytes: await taggedPdf('B', 1), name: 'b.pdf' },
      ],
      { pdfa: '2b' },
    );
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('UNSUPPORTED_CONVERSION');
  });

  it('is listed in the OpenAPI document with its JSON and multipart bodies', async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    const op = doc.paths['/v1/merge'].post;
    expect(op.operationId).toBe('mergeDocuments');
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(op.requestBody.content['multipart/form-data'].schema.properties.files.maxItems).toBe(50);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '413', '422']));
  });

  it('needs an API key (401)', async () => {
    const res = await mergeMultipart(
      t,
      [
        { bytes: await taggedPdf('A', 1), name: 'a.pdf' },
        { bytes: await taggedPdf('B', 1), name: 'b.pdf' },
      ],
      {},
      false,
    );
    expect(res.status).toBe(401);
  });
});
