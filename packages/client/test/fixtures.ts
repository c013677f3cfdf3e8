/** Corpus DOCX fixtures for the Node tests (the browser test serves the same files to the page). */
import fs from 'node:fs';
import path from 'node:path';

export const CORPUS = '/work/shared/corpus/docx';
export const corpus = (name: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, name)));

/** w15:docId {9E5C29AD-…} and dcterms:created 2016-05-09T20:15:00Z (Word 2016). */
export const WITH_DOCID = 'pandoc--comments.docx';
/** dcterms:created and a custom.xml with six properties (pid 2–7), no GUID. */
export const CREATED_AND_CUSTOM = 'pandoc--lists.docx';
/** No docProps at all: neither GUID nor creation time. */
export const BARE = 'mammoth--utf8-bom.docx';
