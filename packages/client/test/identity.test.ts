/**
 * documentId rules and export (docs/api.md § Client library) in Node. The portable cases are the same ones the browser test
 * runs in Chromium; the corpus-wide check reads the corpus folder and so is Node-only. Expected hashes in the
 * portable cases use WebCrypto directly; here one is also recomputed with node:crypto.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';
import { BARE, CREATED_AND_CUSTOM, WITH_DOCID, corpus } from './fixtures.js';
import { DOCID_CREATED, DOCID_GUID, portableCases, type Fixtures } from './portable.js';

const fixtures: Fixtures = { docid: corpus(WITH_DOCID), created: corpus(CREATED_AND_CUSTOM), bare: corpus(BARE) };
const folio = new lib.Folio({ telemetry: { enabled: false } });
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('portable cases (also run in Chromium)', () => {
  for (const c of portableCases) it(c.name, () => c.run(lib, fixtures));
});

describe('Node-only', () => {
  it('agrees with node:crypto', async () => {
    expect((await folio.open(fixtures.docid)).documentId).toBe(sha256(`${DOCID_GUID}|${DOCID_CREATED}`));
    expect((await folio.open(fixtures.created)).documentId).toBe(sha256(fixtures.created));
  });

  it('accepts a File', async () => {
    expect((await folio.open(new File([fixtures.created as BlobPart], 'x.docx'))).documentId).toBe(sha256(fixtures.created));
  });

  it('gives every corpus DOCX a stable rule-1 identity after one export', async () => {
    const names = fs.readdirSync('/work/shared/corpus/docx').filter((n) => n.endsWith('.docx'));
    let checked = 0;
    for (const name of names) {
      let doc;
      try {
        doc = await folio.open(corpus(name));
      } catch (e) {
        expect(e, name).toBeInstanceOf(lib.FolioClientError); // the encrypted, truncated and fuzzed negatives
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
