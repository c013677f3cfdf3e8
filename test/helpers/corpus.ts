/**
 * The real documents the tests read, kept in the repository so that a clone runs every test as it is run here.
 * test/fixtures/corpus/<folder> is a byte-for-byte copy of the project's external corpus folder of that name
 * (docx/, html/, markdown/, templates/); each folder's README names the sources and licences and its SHA256SUMS
 * checks the files. Test input only: nothing in it is shipped.
 */
import path from 'node:path';

const FIXTURES = path.join(import.meta.dirname, '../fixtures');

export const CORPUS = path.join(FIXTURES, 'corpus');
export const CORPUS_DOCX = path.join(CORPUS, 'docx');
export const CORPUS_HTML = path.join(CORPUS, 'html');
export const CORPUS_MARKDOWN = path.join(CORPUS, 'markdown');
export const CORPUS_TEMPLATES = path.join(CORPUS, 'templates');
/** DOCX files with the PDF Word exported of each (the external corpus's word-pdf/, already a fixture folder). */
export const WORD_PDF = path.join(FIXTURES, 'word-pdf');
