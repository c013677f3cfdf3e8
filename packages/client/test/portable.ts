/**
 * The library's unit tests in a form that runs unchanged in Node (vitest, identity.test.ts) and in Chromium
 * (bundled by test/telemetry/browser.test.ts and run in the page against the built browser bundle). No Node
 * built-ins: fixtures come in as bytes, expected hashes are recomputed with WebCrypto directly, packages are
 * edited with fflate.
 */
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import type * as Lib from '../src/index.js';

export type Library = Pick<typeof Lib, 'Folio' | 'FolioClientError' | 'readDocxMetadata'>;
/** Corpus files by role (see fixtures.ts): docid (w15:docId + created), created (created + custom.xml), bare (neither). */
export type Fixtures = Record<'docid' | 'created' | 'bare', Uint8Array>;
export interface PortableCase {
  name: string;
  run(lib: Library, fx: Fixtures): Promise<void>;
}

export const DOCID_GUID = '9E5C29AD-F95A-4ACD-93E4-77244B7D25C9';
export const DOCID_CREATED = '2016-05-09T20:15:00Z';
export const CREATED_CREATED = '2019-09-14T16:37:41Z';

export async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as BufferSource));
  return [...d].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function fail(message: string): never {
  throw new Error(message);
}
function eq(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`);
}
function ok(cond: unknown, what: string): void {
  if (!cond) fail(what);
}
function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function partsOf(bytes: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, data] of Object.entries(unzipSync(bytes))) out[name] = strFromU8(data);
  return out;
}

export function withParts(bytes: Uint8Array, changes: Record<string, string | null>): Uint8Array {
  const files: Record<string, Uint8Array> = { ...unzipSync(bytes) };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete files[name];
    else files[name] = strToU8(value);
  }
  return zipSync(files);
}

export const CORE_WITHOUT_CREATED = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Someone</dc:creator></cp:coreProperties>`;

export const customWithGuid = (guid: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:t="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid"><t:lpwstr>${guid}</t:lpwstr></property></Properties>`;

const off = (lib: Library) => new lib.Folio({ telemetry: { enabled: false } });
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const portableCases: PortableCase[] = [
  {
    name: 'rule 1: w15:docId (braces removed) and dcterms:created → SHA-256 of "GUID|created"',
    async run(lib, fx) {
      const doc = await off(lib).open(fx.docid);
      eq([doc.guid, doc.createdAt, doc.rule], [DOCID_GUID, DOCID_CREATED, 'metadata'], 'identity');
      eq(doc.documentId, await sha256(`${DOCID_GUID}|${DOCID_CREATED}`), 'documentId');
    },
  },
  {
    name: 'rule 1 does not change when the content changes',
    async run(lib, fx) {
      const xml = partsOf(fx.docid)['word/document.xml']!;
      const edited = withParts(fx.docid, { 'word/document.xml': xml.replace(/<w:t>([^<]*)</, '<w:t>$1 edited<') });
      ok((await sha256(edited)) !== (await sha256(fx.docid)), 'the edit changed the bytes');
      eq((await off(lib).open(edited)).documentId, (await off(lib).open(fx.docid)).documentId, 'documentId after edit');
    },
  },
  {
    name: 'rule 1 with the DocumentGuid custom property (any vt prefix); w15:docId wins over it',
    async run(lib, fx) {
      const doc = await off(lib).open(withParts(fx.created, { 'docProps/custom.xml': customWithGuid('abc-123') }));
      eq(doc.guid, 'abc-123', 'guid');
      eq(doc.documentId, await sha256(`abc-123|${CREATED_CREATED}`), 'documentId');
      const both = lib.readDocxMetadata(withParts(fx.docid, { 'docProps/custom.xml': customWithGuid('other') }));
      eq([both.guid, both.guidSource], [DOCID_GUID, 'w15:docId'], 'w15 wins');
    },
  },
  {
    name: 'rule 2: without a GUID, or without a creation time, the id is the SHA-256 of the bytes',
    async run(lib, fx) {
      const a = await off(lib).open(fx.created);
      eq([a.guid, a.createdAt, a.rule], [null, CREATED_CREATED, 'content'], 'identity');
      eq(a.documentId, await sha256(fx.created), 'documentId');
      const noCreated = withParts(fx.docid, { 'docProps/core.xml': CORE_WITHOUT_CREATED });
      const b = await off(lib).open(noCreated);
      eq([b.guid, b.createdAt, b.rule], [DOCID_GUID, null, 'content'], 'GUID alone');
      eq(b.documentId, await sha256(noCreated), 'documentId without created');
    },
  },
  {
    name: 'Uint8Array, ArrayBuffer and Blob give the same id',
    async run(lib, fx) {
      const ids = await Promise.all([fx.created, fx.created.slice().buffer, new Blob([fx.created as BlobPart])].map((i) => off(lib).open(i)));
      eq(new Set(ids.map((d) => d.documentId)).size, 1, 'distinct ids');
    },
  },
  {
    name: 'what is not a DOCX is refused with INVALID_FILE_FORMAT',
    async run(lib, fx) {
      for (const [what, bytes] of [
        ['text', new TextEncoder().encode('plain text, not a package')],
        ['zip without word/document.xml', withParts(fx.bare, { 'word/document.xml': null })],
        ['truncated', fx.docid.slice(0, 2000)],
      ] as const) {
        const e = await off(lib)
          .open(bytes)
          .then(
            () => undefined,
            (x: unknown) => x,
          );
        ok(e instanceof lib.FolioClientError, `${what}: rejected with FolioClientError`);
        eq((e as { code: string }).code, 'INVALID_FILE_FORMAT', `${what}: code`);
      }
    },
  },
  {
    name: 'export returns the bytes unchanged when GUID and creation time are present',
    async run(lib, fx) {
      ok(bytesEqual(await (await off(lib).open(fx.docid)).export(), fx.docid), 'unchanged');
    },
  },
  {
    name: 'export writes a missing GUID into the existing custom.xml; reopening gives the rule-1 id',
    async run(lib, fx) {
      const doc = await off(lib).open(fx.created);
      const out = await doc.export();
      const before = unzipSync(fx.created);
      const after = unzipSync(out);
      const custom = strFromU8(after['docProps/custom.xml']!);
      ok(custom.includes('pid="8" name="DocumentGuid"'), 'DocumentGuid with the next pid');
      ok(custom.includes('name="ShareDoc"'), 'existing properties kept');
      for (const name of Object.keys(before).filter((n) => n !== 'docProps/custom.xml')) {
        ok(after[name] && bytesEqual(after[name]!, before[name]!), `${name} unchanged`);
      }
      ok(UUID_V4.test(doc.identity.guid), 'a v4 UUID');
      const again = await off(lib).open(out);
      eq([again.rule, again.guid], ['metadata', doc.identity.guid], 'reopened identity');
      eq(again.documentId, await sha256(`${doc.identity.guid}|${CREATED_CREATED}`), 'reopened documentId');
      eq((await off(lib).open(await doc.export())).documentId, again.documentId, 'a second export carries the same identity');
      ok(bytesEqual(await again.export(), out), 'the reopened file exports unchanged');
    },
  },
  {
    name: 'export creates core.xml and custom.xml with relationships and content types when absent',
    async run(lib, fx) {
      const doc = await off(lib).open(fx.bare);
      eq([doc.guid, doc.createdAt, doc.rule], [null, null, 'content'], 'identity');
      const out = partsOf(await doc.export());
      ok(
        /<dcterms:created xsi:type="dcterms:W3CDTF">\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/dcterms:created>/.test(out['docProps/core.xml'] ?? ''),
        'core.xml',
      );
      ok((out['docProps/custom.xml'] ?? '').includes(`<vt:lpwstr>${doc.identity.guid}</vt:lpwstr>`), 'custom.xml');
      ok(
        out['[Content_Types].xml']!.includes(
          'PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"',
        ),
        'core content type',
      );
      ok(
        out['[Content_Types].xml']!.includes(
          'PartName="/docProps/custom.xml" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"',
        ),
        'custom content type',
      );
      ok(out['_rels/.rels']!.includes('relationships/metadata/core-properties" Target="docProps/core.xml"'), 'core relationship');
      ok(out['_rels/.rels']!.includes('relationships/custom-properties" Target="docProps/custom.xml"'), 'custom relationship');
      const ids = [...out['_rels/.rels']!.matchAll(/Id="([^"]+)"/g)].map((m) => m[1]);
      eq(new Set(ids).size, ids.length, 'unique relationship ids');
      const again = await off(lib).open(await doc.export());
      eq(again.documentId, await sha256(`${doc.identity.guid}|${doc.identity.createdAt}`), 'reopened documentId');
    },
  },
  {
    name: 'export adds only the creation time when the GUID is there (w15:docId is never rewritten)',
    async run(lib, fx) {
      const bytes = withParts(fx.docid, { 'docProps/core.xml': CORE_WITHOUT_CREATED });
      const doc = await off(lib).open(bytes);
      const out = partsOf(await doc.export());
      ok(out['docProps/core.xml']!.includes('<dc:creator>Someone</dc:creator>'), 'core kept');
      ok(out['docProps/core.xml']!.includes('xmlns:dcterms="http://purl.org/dc/terms/"'), 'dcterms declared');
      ok(out['docProps/core.xml']!.includes('xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'), 'xsi declared');
      eq(out['docProps/custom.xml'], undefined, 'no custom.xml');
      eq(out['word/settings.xml'], partsOf(bytes)['word/settings.xml'], 'settings unchanged');
      const again = await off(lib).open(await doc.export());
      eq(again.documentId, await sha256(`${DOCID_GUID}|${doc.identity.createdAt}`), 'reopened documentId');
    },
  },
];
