/**
 * documentId rules and export (CONTRACT §8) in Node, on real corpus documents and on packages built to cover
 * each metadata combination. Expected ids are recomputed here with node:crypto, independently of WebCrypto.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Folio, FolioClientError, readDocxMetadata } from '../src/index.js';
import {
  BARE, CORE_WITHOUT_CREATED, CREATED_AND_CUSTOM, WITH_DOCID, corpus, customWithGuid, parts, rawParts, withParts,
} from './fixtures.js';

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const folio = new Folio({ telemetry: { enabled: false } });

describe('documentId', () => {
  it('rule 1: w15:docId (braces removed) and dcterms:created → SHA-256 of "GUID|created"', async () => {
    const doc = await folio.open(corpus(WITH_DOCID));
    expect(doc.guid).toBe('9E5C29AD-F95A-4ACD-93E4-77244B7D25C9');
    expect(doc.createdAt).toBe('2016-05-09T20:15:00Z');
    expect(doc.rule).toBe('metadata');
    expect(doc.documentId).toBe(sha256('9E5C29AD-F95A-4ACD-93E4-77244B7D25C9|2016-05-09T20:15:00Z'));
    expect(doc.documentId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('rule 1 does not change when the content changes', async () => {
    const original = corpus(WITH_DOCID);
    const files = parts(original);
    const edited = withParts(original, { 'word/document.xml': files['word/document.xml']!.replace(/<w:t>([^<]*)</, '<w:t>$1 edited<') });
    expect(sha256(edited)).not.toBe(sha256(original));
    expect((await folio.open(edited)).documentId).toBe((await folio.open(original)).documentId);
  });

  it('rule 1 with the DocumentGuid custom property when there is no w15:docId (any vt prefix)', async () => {
    const bytes = withParts(corpus(CREATED_AND_CUSTOM), { 'docProps/custom.xml': customWithGuid('abc-123') });
    const doc = await folio.open(bytes);
    expect(doc.guid).toBe('abc-123');
    expect(doc.documentId).toBe(sha256('abc-123|2019-09-14T16:37:41Z'));
  });

  it('w15:docId wins over DocumentGuid', async () => {
    const bytes = withParts(corpus(WITH_DOCID), { 'docProps/custom.xml': customWithGuid('other-guid') });
    const meta = readDocxMetadata(bytes);
    expect(meta.guid).toBe('9E5C29AD-F95A-4ACD-93E4-77244B7D25C9');
    expect(meta.guidSource).toBe('w15:docId');
  });

  it('rule 2: no GUID → SHA-256 of the file bytes; the same bytes give the same id', async () => {
    const bytes = corpus(CREATED_AND_CUSTOM);
    const a = await folio.open(bytes);
    expect(a.guid).toBeNull();
    expect(a.createdAt).toBe('2019-09-14T16:37:41Z');
    expect(a.rule).toBe('content');
    expect(a.documentId).toBe(sha256(bytes));
    expect((await folio.open(bytes)).documentId).toBe(a.documentId);
  });

  it('rule 2: a GUID without a creation time is not enough', async () => {
    const bytes = withParts(corpus(WITH_DOCID), { 'docProps/core.xml': CORE_WITHOUT_CREATED });
    const doc = await folio.open(bytes);
    expect(doc.guid).toBe('9E5C29AD-F95A-4ACD-93E4-77244B7D25C9');
    expect(doc.createdAt).toBeNull();
    expect(doc.documentId).toBe(sha256(bytes));
  });

  it('accepts Uint8Array, ArrayBuffer, Blob and File alike', async () => {
    const bytes = corpus(CREATED_AND_CUSTOM);
    const ids = await Promise.all([
      folio.open(bytes),
      folio.open(bytes.slice().buffer),
      folio.open(new Blob([bytes])),
      folio.open(new File([bytes], 'x.docx')),
    ]);
    expect(new Set(ids.map((d) => d.documentId)).size).toBe(1);
  });

  it('refuses what is not a DOCX with INVALID_FILE_FORMAT', async () => {
    await expect(folio.open(new TextEncoder().encode('plain text, not a package'))).rejects.toMatchObject({ code: 'INVALID_FILE_FORMAT' });
    const zipNotDocx = withParts(corpus(BARE), { 'word/document.xml': null });
    await expect(folio.open(zipNotDocx)).rejects.toBeInstanceOf(FolioClientError);
    const truncated = corpus(WITH_DOCID).slice(0, 2000);
    await expect(folio.open(truncated)).rejects.toMatchObject({ code: 'INVALID_FILE_FORMAT' });
  });
});

describe('export', () => {
  it('returns the bytes unchanged when GUID and creation time are both present', async () => {
    const bytes = corpus(WITH_DOCID);
    expect(await (await folio.open(bytes)).export()).toEqual(bytes);
  });

  it('writes a missing GUID as DocumentGuid into an existing custom.xml; reopening gives the rule-1 id', async () => {
    const bytes = corpus(CREATED_AND_CUSTOM);
    const doc = await folio.open(bytes);
    const out = await doc.export();
    const before = parts(bytes);
    const after = parts(out);
    expect(after['docProps/custom.xml']).toContain('pid="8" name="DocumentGuid"');
    expect(after['docProps/custom.xml']).toContain('name="ShareDoc"');
    expect(after['docProps/core.xml']).toBe(before['docProps/core.xml']);
    // Every other part is carried over unchanged.
    const raw = rawParts(bytes);
    const rawOut = rawParts(out);
    for (const name of Object.keys(raw).filter((n) => n !== 'docProps/custom.xml')) expect(rawOut[name], name).toEqual(raw[name]);
    const again = await folio.open(out);
    expect(again.rule).toBe('metadata');
    expect(again.guid).toBe(doc.identity.guid);
    expect(again.guid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(again.documentId).toBe(sha256(`${doc.identity.guid}|2019-09-14T16:37:41Z`));
    // Exporting twice writes the same identity; a third open agrees.
    expect((await folio.open(await doc.export())).documentId).toBe(again.documentId);
    expect(await again.export()).toEqual(out);
  });

  it('creates docProps/core.xml and custom.xml with relationships and content types when absent', async () => {
    const bytes = corpus(BARE);
    const doc = await folio.open(bytes);
    expect([doc.guid, doc.createdAt, doc.rule]).toEqual([null, null, 'content']);
    const out = parts(await doc.export());
    expect(out['docProps/core.xml']).toMatch(/<dcterms:created xsi:type="dcterms:W3CDTF">\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/dcterms:created>/);
    expect(out['docProps/custom.xml']).toContain(`<vt:lpwstr>${doc.identity.guid}</vt:lpwstr>`);
    expect(out['[Content_Types].xml']).toContain('PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"');
    expect(out['[Content_Types].xml']).toContain('PartName="/docProps/custom.xml" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"');
    expect(out['_rels/.rels']).toContain('Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"');
    expect(out['_rels/.rels']).toContain('Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties" Target="docProps/custom.xml"');
    const ids = [...out['_rels/.rels']!.matchAll(/Id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    const again = await folio.open(await doc.export());
    expect(again.documentId).toBe(sha256(`${doc.identity.guid}|${doc.identity.createdAt}`));
    expect(again.createdAt).toBe(doc.identity.createdAt);
  });

  it('adds only the creation time when the GUID is there (w15:docId is never rewritten)', async () => {
    const bytes = withParts(corpus(WITH_DOCID), { 'docProps/core.xml': CORE_WITHOUT_CREATED });
    const doc = await folio.open(bytes);
    const out = parts(await doc.export());
    expect(out['docProps/core.xml']).toContain('<dc:creator>Someone</dc:creator>');
    expect(out['docProps/core.xml']).toContain('xmlns:dcterms="http://purl.org/dc/terms/"');
    expect(out['docProps/core.xml']).toContain('xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"');
    expect(out['docProps/custom.xml']).toBeUndefined();
    expect(out['word/settings.xml']).toBe(parts(bytes)['word/settings.xml']);
    const again = await folio.open(await doc.export());
    expect(again.documentId).toBe(sha256(`9E5C29AD-F95A-4ACD-93E4-77244B7D25C9|${doc.identity.createdAt}`));
  });

  it('gives every corpus DOCX a stable rule-1 identity after one export', async () => {
    const fs = await import('node:fs');
    const names = fs.readdirSync('/work/shared/corpus/docx').filter((n) => n.endsWith('.docx'));
    let checked = 0;
    for (const name of names) {
      let doc;
      try {
        doc = await folio.open(corpus(name));
      } catch (e) {
        expect(e, name).toBeInstanceOf(FolioClientError); // the encrypted, truncated and fuzzed negatives
        continue;
      }
      const again = await folio.open(await doc.export());
      expect(again.rule, name).toBe('metadata');
      expect(again.documentId, name).toBe(doc.rule === 'metadata' ? doc.documentId : sha256(`${doc.identity.guid}|${doc.identity.createdAt}`));
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});
