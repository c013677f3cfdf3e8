/** DOCX fixtures: real corpus files, and small packages built here to cover each metadata combination. */
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';

export const CORPUS = '/work/shared/corpus/docx';
export const corpus = (name: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, name)));

/** w15:docId {9E5C29AD-…} and dcterms:created 2016-05-09T20:15:00Z (Word 2016). */
export const WITH_DOCID = 'pandoc--comments.docx';
/** dcterms:created and a custom.xml with six properties (pid 2–7), no GUID. */
export const CREATED_AND_CUSTOM = 'pandoc--lists.docx';
/** No docProps at all: neither GUID nor creation time. */
export const BARE = 'mammoth--utf8-bom.docx';

export function parts(bytes: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, data] of Object.entries(unzipSync(bytes))) out[name] = strFromU8(data);
  return out;
}

export function rawParts(bytes: Uint8Array): Record<string, Uint8Array> {
  return unzipSync(bytes);
}

/** A copy of `bytes` with parts replaced, added (string) or removed (null). */
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

/** Custom properties with an unusual vt prefix and a DocumentGuid. */
export const customWithGuid = (guid: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:t="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid"><t:lpwstr>${guid}</t:lpwstr></property></Properties>`;
