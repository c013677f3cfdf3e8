/**
 * DOCX input: converted by the real LibreOffice pool, then sealed. The PDF's text (pdftotext) must match
 * the DOCX's own text, and the audit record must hash both the DOCX as received and the converted PDF.
 */
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { CORPUS_DOCX } from '../helpers/corpus.js';
import {
  auditAttachment,
  lastSignature,
  opensslCmsVerify,
  pageCount,
  pdfsig,
  pdftotext,
  postSign,
  qpdfCheck,
  sha256,
  signBody,
  tmpDir,
  writeTemp,
} from './helpers.js';

const SAMPLE = path.join(CORPUS_DOCX, 'docx4j--sample-docx.docx');

/** The words of the DOCX body text, in order, from its w:t runs. */
function docxWords(docx: Uint8Array): string[] {
  const xml = strFromU8(unzipSync(docx, { filter: (f) => f.name === 'word/document.xml' })['word/document.xml']!);
  const paragraphs = xml.split(/<w:p[ >]/).map((p) => [...p.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(''));
  return paragraphs.join(' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').split(/\s+/).filter(Boolean);
}

const normalise = (s: string) => s.replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ');

describe('POST /v1/sign with a DOCX', () => {
  let t: TestApi;
  let work: string;
  beforeAll(async () => {
    t = await startTestApi({ office: true });
    work = tmpDir('folio-sign-docx-');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('converts it, keeps its text, and records both hashes', async () => {
    const docx = new Uint8Array(fs.readFileSync(SAMPLE));
    const res = await postSign(t, signBody(docx));
    expect(res.status).toBe(200);
    const file = writeTemp(work, 'docx-signed.pdf', res.pdf!);
    expect(qpdfCheck(file).status).toBe(0);
    const sig = pdfsig(file);
    expect(sig).toContain('Signature Validation: Signature is Valid.');
    expect(sig).toContain('Total document signed');
    expect(opensslCmsVerify(work, lastSignature(res.pdf!), t.services.signing!.rootCertificatePem!).status).toBe(0);

    const json = auditAttachment(file);
    expect(json.documentType).toBe('docx');
    expect(json.documentSha256).toBe(sha256(docx));
    expect(json.pdfSha256).toBe(sha256(res.pdf!.subarray(0, json.pdfLength)));
    expect(json.pdfSha256).not.toBe(json.documentSha256);

    // The document pages (all but the audit page) carry the DOCX's words, in order.
    const pages = pageCount(file);
    const text = normalise(pdftotext(file, 1, pages - 1));
    const words = docxWords(docx);
    expect(words.length).toBeGreaterThan(20);
    let at = 0;
    let found = 0;
    for (const word of words.map(normalise)) {
      const i = text.indexOf(word, at);
      if (i >= 0) {
        found++;
        at = i + word.length;
      }
    }
    expect(found / words.length).toBeGreaterThan(0.9);
    const audit = normalise(pdftotext(file, pages, pages));
    expect(audit).toContain('Original DOCX SHA-256');
    expect(audit.replace(/\s+/g, '')).toContain(sha256(docx));
  }, 120_000);

  it('a ZIP that is not a DOCX is refused with a 4xx, not a crash', async () => {
    const { zipSync, strToU8 } = await import('fflate');
    const zip = zipSync({ 'hello.txt': strToU8('not a word document') });
    const res = await postSign(t, signBody(zip));
    expect([400, 422]).toContain(res.status);
    expect(['INVALID_FILE_FORMAT', 'UNPROCESSABLE_DOCUMENT']).toContain(res.json.code);
  }, 120_000);
});
