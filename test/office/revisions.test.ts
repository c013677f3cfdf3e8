/** Accepting and rejecting tracked changes, and dropping comments, in WordprocessingML (no LibreOffice involved). */
import { describe, expect, it } from 'vitest';
import { resolveRevisions } from '../../src/office/revisions.js';
import { stripCommentContentTypes, stripCommentMarks, stripCommentRelationships } from '../../src/office/comments.js';
import { parseXml } from '../../src/docx/xml.js';

const rev = 'w:id="1" w:author="A" w:date="2024-01-01T00:00:00Z"';
const run = (t: string) => `<w:r><w:t>${t}</w:t></w:r>`;
const delRun = (t: string) => `<w:r><w:delText>${t}</w:delText></w:r>`;
const text = (xml: string) => [...xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join('|');

describe('resolveRevisions', () => {
  const para = `<w:p>${run('keep')}<w:ins ${rev}>${run('added')}</w:ins><w:del ${rev}>${delRun('removed')}</w:del></w:p>`;

  it('accept keeps insertions and drops deletions', () => {
    const out = resolveRevisions(para, 'accept');
    expect(text(out)).toBe('keep|added');
    expect(out).not.toMatch(/<w:(ins|del)[\s>]/);
    expect(out).not.toContain('removed');
  });

  it('reject drops insertions and restores deletions as ordinary text', () => {
    const out = resolveRevisions(para, 'reject');
    expect(text(out)).toBe('keep|removed');
    expect(out).not.toContain('delText');
    expect(out).not.toContain('added');
  });

  it('text inserted then deleted by another reviewer is gone either way', () => {
    const xml = `<w:p>${run('a')}<w:ins ${rev}><w:del ${rev}>${delRun('ghost')}</w:del></w:ins></w:p>`;
    expect(resolveRevisions(xml, 'accept')).not.toContain('ghost');
    expect(resolveRevisions(xml, 'reject')).not.toContain('ghost');
  });

  it('moves: accept keeps the destination, reject the source', () => {
    const xml =
      `<w:p><w:moveFromRangeStart w:id="5" w:name="m"/><w:moveFrom ${rev}>${run('moved')}</w:moveFrom><w:moveFromRangeEnd w:id="5"/></w:p>` +
      `<w:p>${run('middle')}</w:p><w:p><w:moveToRangeStart w:id="6" w:name="m"/><w:moveTo ${rev}>${run('moved')}</w:moveTo><w:moveToRangeEnd w:id="6"/></w:p>`;
    const accepted = resolveRevisions(xml, 'accept');
    expect(text(accepted)).toBe('middle|moved');
    expect(accepted).not.toMatch(/moveTo|moveFrom/);
    expect(text(resolveRevisions(xml, 'reject'))).toBe('moved|middle');
  });

  it('inserted and deleted table rows, also in nested tables', () => {
    const row = (t: string, mark = '') => `<w:tr>${mark ? `<w:trPr>${mark}</w:trPr>` : ''}<w:tc><w:p>${run(t)}</w:p></w:tc></w:tr>`;
    const inner = `<w:tbl>${row('inner-kept')}${row('inner-new', `<w:ins ${rev}/>`)}</w:tbl>`;
    const xml = `<w:tbl>${row('plain')}${row('new-row', `<w:ins ${rev}/>`)}${row('old-row', `<w:del ${rev}/>`)}<w:tr><w:tc>${inner}<w:p/></w:tc></w:tr></w:tbl>`;
    expect(text(resolveRevisions(xml, 'accept'))).toBe('plain|new-row|inner-kept|inner-new');
    expect(text(resolveRevisions(xml, 'reject'))).toBe('plain|old-row|inner-kept');
    expect(resolveRevisions(xml, 'reject').match(/<w:tr>/g)).toHaveLength(4);
  });

  it('formatting changes: accept keeps the new properties, reject restores the old run properties', () => {
    const xml =
      `<w:r><w:rPr><w:b/><w:rPrChange ${rev}><w:rPr><w:i/></w:rPr></w:rPrChange></w:rPr><w:t>styled</w:t></w:r>` +
      `<w:p><w:pPr><w:jc w:val="center"/><w:pPrChange ${rev}><w:pPr><w:jc w:val="left"/></w:pPr></w:pPrChange></w:pPr>${run('p')}</w:p>`;
    const accepted = resolveRevisions(xml, 'accept');
    expect(accepted).toContain('<w:rPr><w:b/></w:rPr>');
    expect(accepted).not.toContain('Change');
    const rejected = resolveRevisions(xml, 'reject');
    expect(rejected).toContain('<w:rPr><w:i/></w:rPr>');
    expect(rejected).not.toContain('Change');
  });

  it('leaves w:delText-like names and unrelated elements alone when accepting', () => {
    const xml = `<w:p><w:r><w:t>x</w:t></w:r><w:r><w:instrText> PAGE </w:instrText></w:r></w:p>`;
    expect(resolveRevisions(xml, 'accept')).toBe(xml);
  });
});

describe('comments', () => {
  it('drops range marks and the runs holding references, leaving the rest byte for byte', () => {
    const xml =
      `<?xml version="1.0"?>\n<w:document xmlns:w="urn:w"><w:body><w:p><w:commentRangeStart w:id="0"/>${run('kept')}<w:commentRangeEnd w:id="0"/>` +
      `<w:r><w:rPr><w:rStyle w:val="CommentReference"/></w:rPr><w:commentReference w:id="0"/></w:r>${run('after &amp; more')}</w:p></w:body></w:document>`;
    expect(stripCommentMarks(xml)).toBe(
      `<?xml version="1.0"?>\n<w:document xmlns:w="urn:w"><w:body><w:p>${run('kept')}${run('after &amp; more')}</w:p></w:body></w:document>`,
    );
  });

  it('a reference inside a text box removes only its own run, and the part stays well-formed', () => {
    // The former regex removed from the outer run's start to the inner run's end, breaking the XML.
    const xml =
      `<w:document xmlns:w="urn:w" xmlns:v="urn:v"><w:body><w:p><w:r><w:pict><v:textbox><w:txbxContent><w:p>` +
      `<w:r><w:commentReference w:id="1"/></w:r>${run('boxed')}</w:p></w:txbxContent></v:textbox></w:pict></w:r></w:p></w:body></w:document>`;
    const out = stripCommentMarks(xml);
    expect(() => parseXml(out, 'word/document.xml')).not.toThrow();
    expect(text(out)).toBe('boxed');
    expect(out).toContain('<w:txbxContent>');
    expect(out).not.toContain('commentReference');
  });

  it('drops the comment relationships and content types only', () => {
    const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
    const rels = `<Relationships xmlns="urn:r"><Relationship Id="rId1" Type="${R}/styles" Target="styles.xml"/><Relationship Id="rId2" Type="${R}/comments" Target="comments.xml"/><Relationship Id="rId3" Type="http://schemas.microsoft.com/office/2011/relationships/commentsExtended" Target="commentsExtended.xml"/></Relationships>`;
    expect(stripCommentRelationships(rels)).toBe(
      `<Relationships xmlns="urn:r"><Relationship Id="rId1" Type="${R}/styles" Target="styles.xml"/></Relationships>`,
    );
    const types =
      '<Types xmlns="urn:t"><Override PartName="/word/document.xml" ContentType="a"/><Override PartName="/word/comments.xml" ContentType="b"/><Override PartName="/word/commentsIds.xml" ContentType="c"/></Types>';
    expect(stripCommentContentTypes(types)).toBe('<Types xmlns="urn:t"><Override PartName="/word/document.xml" ContentType="a"/></Types>');
  });
});
