/**
 * `comments=margin` prints at most MAX_COMMENTS comments, and none anchored outside the body text; what it
 * leaves out is now said (issue 23: 2,000 of 20,000 were printed with no word). The rewrite on its own, then
 * POST /v1/convert against real LibreOffice for the X-Folio-Warnings header.
 */
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDocx } from '../../src/docx/package.js';
import { MAX_COMMENTS, placeCommentsInMargin } from '../../src/office/comments-margin.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { pdfText } from './helpers.js';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const WML = 'application/vnd.openxmlformats-officedocument.wordprocessingml';

/**
 * A DOCX whose first paragraph carries `anchored` comments (ids 0…), plus `inHeader` comments anchored in
 * the header and `unanchored` ones nobody points at.
 */
function manyComments(anchored: number, inHeader = 0, unanchored = 0): Uint8Array {
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
  const refs = (list: number[]) => list.map((id) => `<w:r><w:commentReference w:id="${id}"/></w:r>`).join('');
  const headerIds = ids(anchored, inHeader);
  const all = ids(0, anchored + inHeader + unanchored);
  const comment = (id: number) =>
    `<w:comment w:id="${id}" w:author="Reviewer" w:initials="R"><w:p><w:r><w:t>Remark number ${id}</w:t></w:r></w:p></w:comment>`;
  const body =
    `<w:p><w:r><w:t>The commented paragraph.</w:t></w:r>${refs(ids(0, anchored))}</w:p>` +
    '<w:p><w:r><w:t>A second paragraph.</w:t></w:r></w:p>' +
    '<w:sectPr><w:headerReference w:type="default" r:id="rIdH"/><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr>';
  return zipSync({
    '[Content_Types].xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
        `<Override PartName="/word/document.xml" ContentType="${WML}.document.main+xml"/><Override PartName="/word/comments.xml" ContentType="${WML}.comments+xml"/>` +
        `<Override PartName="/word/header1.xml" ContentType="${WML}.header+xml"/></Types>`,
    ),
    '_rels/.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    'word/_rels/document.xml.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rIdC" Type="${R}/comments" Target="comments.xml"/><Relationship Id="rIdH" Type="${R}/header" Target="header1.xml"/></Relationships>`,
    ),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${body}</w:body></w:document>`,
    ),
    'word/header1.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:hdr xmlns:w="${W}"><w:p><w:r><w:t>Header</w:t></w:r>${refs(headerIds)}</w:p></w:hdr>`,
    ),
    'word/comments.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:comments xmlns:w="${W}">${all.map(comment).join('')}</w:comments>`),
  });
}

function marginWarnings(docx: Uint8Array): { placed: boolean; warnings: string[]; main: string } {
  const pkg = openDocx(docx);
  const warnings: string[] = [];
  const placed = placeCommentsInMargin(pkg, warnings);
  return { placed, warnings, main: pkg.text('word/document.xml') ?? '' };
}

describe('comments=margin: what is left out is said', () => {
  it(`past ${MAX_COMMENTS} comments: the rest are counted, and those anchored in a header or nowhere too`, () => {
    const { placed, warnings, main } = marginWarnings(manyComments(MAX_COMMENTS + 50, 2, 1));
    expect(placed).toBe(true);
    expect(warnings).toEqual([
      'comments=margin: 53 of 2,053 comments were left out of the PDF: 50 past the first 2,000 (the most the margin column prints); ' +
        '3 not anchored in the body text (in headers or footnotes, or not anchored at all)',
    ]);
    // The first 2,000 are printed, the 2,001st is not.
    expect(main).toContain(`Remark number ${MAX_COMMENTS - 1}<`);
    expect(main).not.toContain(`Remark number ${MAX_COMMENTS}<`);
  });

  it('every comment printed: no warning', () => {
    const { placed, warnings } = marginWarnings(manyComments(12));
    expect(placed).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('only header comments: nothing placed, and all of them reported', () => {
    const { placed, warnings } = marginWarnings(manyComments(0, 3));
    expect(placed).toBe(false);
    expect(warnings).toEqual([
      'comments=margin: 3 of 3 comments were left out of the PDF: 3 not anchored in the body text (in headers or footnotes, or not anchored at all)',
    ]);
  });
});

describe('POST /v1/convert?comments=margin (real LibreOffice)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  });

  const convert = (docx: Uint8Array, comments: string) => {
    const fd = new FormData();
    fd.append('file', new Blob([docx as BlobPart]), 'reviewed.docx');
    return fetch(`${api.url}/v1/convert?from=docx&to=pdf&comments=${comments}`, authed(api, { method: 'POST', body: fd }));
  };

  it(`${MAX_COMMENTS + 10} comments: 200, the PDF prints the first ones, Warning and X-Folio-Warnings count the 10 left out`, async () => {
    const res = await convert(manyComments(MAX_COMMENTS + 10), 'margin');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toBe(
      'comments=margin: 10 of 2,010 comments were left out of the PDF: 10 past the first 2,000 (the most the margin column prints)',
    );
    expect(res.headers.get('warning')).toMatch(/^299 folio "comments=margin: 10 of 2,010 comments were left out/);
    const text = pdfText(new Uint8Array(await res.arrayBuffer())).replace(/\s+/g, ' ');
    expect(text).toContain('The commented paragraph.');
    expect(text).toContain('Remark number 0');
  }, 180_000);

  it('comments=none leaves comments out by request: no warning', async () => {
    const res = await convert(manyComments(30), 'none');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toBeNull();
  }, 180_000);
});
