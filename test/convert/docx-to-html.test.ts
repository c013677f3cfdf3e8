/**
 * DOCX → HTML (docxToHtml, POST /v1/convert?to=html): one self-contained HTML5 document with semantic
 * elements and inline CSS for Word's direct formatting; nothing from the document can run (scripts, event
 * handlers, javascript: links), checked with a real HTML parser over Folio-built, hand-written and corpus
 * packages.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'htmlparser2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Element } from 'domhandler';
import { docxToHtml, htmlToDocx, markdownToDocx } from '../../src/convert/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { buildZip } from '../support/zip.js';
import { CORPUS_DOCX as CORPUS } from '../helpers/corpus.js';
import { PNG_1x1 } from './helpers.js';

const ALL = ['table', 'strikethrough', 'tasklist', 'footnotes', 'autolink'] as const;

function elements(html: string): Element[] {
  const out: Element[] = [];
  const walk = (nodes: unknown[]) => {
    for (const n of nodes as Array<{ type: string; children?: unknown[] }>) {
      if (n.type === 'tag' || n.type === 'script' || n.type === 'style') out.push(n as unknown as Element);
      if (n.children) walk(n.children);
    }
  };
  walk(parseDocument(html).children);
  return out;
}

/** No element can run anything: no script, no on* attribute, no javascript:/vbscript: URL, images only as data URIs. */
function assertInert(html: string): void {
  for (const e of elements(html)) {
    expect(e.name).not.toMatch(/^(script|iframe|object|embed|frame|base|form|link|meta-refresh)$/);
    for (const [k, v] of Object.entries(e.attribs)) {
      expect(k.toLowerCase().startsWith('on'), `${e.name} ${k}`).toBe(false);
      // eslint-disable-next-line no-control-regex
      if (k === 'href' || k === 'src') expect(v.replace(/[\s\u0000-\u001f]/g, '')).not.toMatch(/^(javascript|vbscript|file|data:text):?/i);
      if (k === 'src') expect(v).toMatch(/^data:image\//);
    }
  }
}

function pkg(body: string, rels = ''): Uint8Array {
  return new Uint8Array(
    buildZip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      {
        name: '_rels/.rels',
        data: '<Relationships><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="c" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>',
      },
      {
        name: 'word/document.xml',
        data: `<w:document xmlns:w="w" xmlns:r="r"><w:body>${body}</w:body></w:document>`,
      },
      { name: 'word/_rels/document.xml.rels', data: `<Relationships>${rels}</Relationships>` },
      {
        name: 'docProps/core.xml',
        data: '<cp:coreProperties xmlns:cp="cp" xmlns:dc="dc"><dc:title>Quarterly &lt;report&gt; &amp; more</dc:title></cp:coreProperties>',
      },
    ]),
  );
}

describe('docxToHtml', () => {
  it('writes one HTML5 document with semantic elements', () => {
    const source =
      '# Title\n\n## Two\n\n> quote\n\n- a\n  - b\n\n3. three\n\n```\ncode <b>\n```\n\n| h1 | h2 |\n|---|--:|\n| 1 | 2 |\n\n- [x] done\n\n' +
      'Text[^1] with **bold**, *em*, ~~s~~, `c`, [link](https://example.com).\n\n[^1]: The note.\n';
    const { html, warnings } = docxToHtml(markdownToDocx(source, { markdownExtensions: ALL }));
    expect(warnings).toEqual([]);
    expect(html.startsWith('<!doctype html>\n<html>')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain('<title>Document</title>');
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<h2>Two</h2>');
    expect(html).toContain('<blockquote>\n<p>quote</p>\n</blockquote>');
    expect(html).toContain('<ul>\n<li><p>a</p>\n<ul>\n<li>b</li>\n</ul></li>\n</ul>');
    expect(html).toContain('<ol start="3">');
    expect(html).toContain('<pre><code>code &lt;b&gt;</code></pre>');
    expect(html).toMatch(/<table[^>]*>\n<thead>\n<tr><th[^>]*>h1<\/th><th[^>]*text-align:right[^>]*>h2<\/th><\/tr>\n<\/thead>\n<tbody>/);
    expect(html).toContain('<li class="task-list-item"><input type="checkbox" disabled checked> done</li>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<s>s</s>');
    expect(html).toContain('<code>c</code>');
    expect(html).toContain('<a href="https://example.com">link</a>');
    expect(html).toContain('<sup class="footnote-ref"><a href="#fn1" id="fnref1">1</a></sup>');
    expect(html).toMatch(/<section class="footnotes">[\s\S]*<li id="fn1"><p>\s*The note\.<\/p>/);
    assertInert(html);
  });

  it('carries Word formatting as inline CSS and images as data URIs', () => {
    const bytes = htmlToDocx(
      '<p style="text-align:center;margin-left:36pt">centred <span style="color:#c00000;font-size:14pt">red</span> <u>under</u> <mark>marked</mark></p>' +
        `<p><img alt="dot" src="data:image/png;base64,${PNG_1x1}" width="12" height="12"></p>` +
        '<table style="border:1px solid black"><tr><td style="background:#ffff00">cell</td></tr></table>',
    );
    const { html } = docxToHtml(bytes);
    expect(html).toMatch(/<p style="text-align:center[^"]*">centred/);
    expect(html).toMatch(/<span style="color:#C00000;font-size:14pt">red<\/span>/);
    expect(html).toContain('<u>under</u>');
    expect(html).toContain(`src="data:image/png;base64,${PNG_1x1}"`);
    expect(html).toMatch(/alt="dot"/);
    expect(html).toMatch(/<td[^>]*background-color:#FFFF00[^>]*>cell<\/td>/);
    assertInert(html);
  });

  it('escapes everything and drops javascript: links; the title comes from the core properties', () => {
    const rels =
      '<Relationship Id="h1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="javascript:alert(1)" TargetMode="External"/>' +
      '<Relationship Id="h2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://ok.example/?a=&quot;&gt;&lt;script&gt;" TargetMode="External"/>';
    const body =
      '<w:p><w:hyperlink r:id="h1"><w:r><w:t>bad</w:t></w:r></w:hyperlink><w:r><w:t xml:space="preserve"> &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; </w:t></w:r>' +
      '<w:hyperlink r:id="h2" w:tooltip="&quot; onmouseover=&quot;alert(1)"><w:r><w:t>ok</w:t></w:r></w:hyperlink></w:p>';
    const { html, warnings } = docxToHtml(pkg(body, rels));
    expect(html).toContain('<title>Quarterly &lt;report&gt; &amp; more</title>');
    expect(html).toContain('bad &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<a href="https://ok.example/?a=&quot;&gt;&lt;script&gt;" title="&quot; onmouseover=&quot;alert(1)">ok</a>');
    expect(html).not.toContain('javascript:');
    expect(warnings.join(' ')).toMatch(/javascript/);
    assertInert(html);
  });

  it('turns bookmarks into ids and PAGEREF \\h fields into links to them, never a link inside a link', () => {
    const body =
      '<w:p><w:hyperlink w:anchor="_Toc1"><w:r><w:t xml:space="preserve">Intro </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r>' +
      '<w:r><w:instrText xml:space="preserve"> PAGEREF _Toc1 \\h </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>3</w:t></w:r>' +
      '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:hyperlink></w:p>' +
      '<w:p><w:r><w:t xml:space="preserve">See page </w:t></w:r><w:fldSimple w:instr=" PAGEREF _Toc1 \\h "><w:r><w:t>3</w:t></w:r></w:fldSimple></w:p>' +
      '<w:p><w:bookmarkStart w:id="0" w:name="_Toc1"/><w:r><w:t>Intro</w:t></w:r><w:bookmarkEnd w:id="0"/></w:p>';
    const { html } = docxToHtml(pkg(body));
    expect(html).toContain('<p><a href="#_Toc1">Intro 3</a></p>');
    expect(html).toContain('<p>See page <a href="#_Toc1">3</a></p>');
    expect(html).toContain('<p><a id="_Toc1"></a>Intro</p>');
    assertInert(html);
  });

  it('converts the corpus into inert HTML', () => {
    let converted = 0;
    for (const name of fs.readdirSync(CORPUS).filter((f) => /\.(docx|docm|dotx)$/.test(f))) {
      let html: string;
      try {
        html = docxToHtml(new Uint8Array(fs.readFileSync(path.join(CORPUS, name)))).html;
      } catch (e) {
        expect((e as { code?: string }).code, name).toMatch(/^(UNPROCESSABLE_DOCUMENT|INVALID_FILE_FORMAT)$/);
        continue;
      }
      assertInert(html);
      converted++;
    }
    expect(converted).toBeGreaterThanOrEqual(117);
  }, 600_000);
});

describe('POST /v1/convert?to=html', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers HTML with its content type, a sandboxing CSP and the file name', async () => {
    const fd = new FormData();
    fd.append('file', new Blob([markdownToDocx('# Hi\n\n**x**\n') as BlobPart]), 'notes.docx');
    const res = await fetch(`${api.url}/v1/convert?to=html`, authed(api, { method: 'POST', body: fd }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="notes.html"');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    const html = await res.text();
    expect(html).toContain('<h1>Hi</h1>');
    expect(html).toContain('<strong>x</strong>');
  });
});
