/**
 * The Markdown → DOCX direct writer (markdown-docx.ts, tokens straight to WordprocessingML) against the DOM
 * path it replaces for documents without raw HTML (tokens → DOM → the HTML walk): over every spec example
 * without raw HTML, both must give the same body, numbering, footnotes and relationships. The DOM path stays
 * in use for raw HTML, so a divergence here would be a behaviour that depends on which path a document takes.
 */
import { describe, expect, it } from 'vitest';
import { convertHtml, convertMarkdownDom, type ConvertedBody } from '../../src/convert/html-to-docx.js';
import { markdownForDocx, parseMarkdown } from '../../src/convert/markdown.js';
import { markdownDocxBody } from '../../src/convert/markdown-docx.js';
import { markdownToDocx } from '../../src/convert/index.js';
import { readDocx } from './docx-reader.js';
import { extensionsOf, loadExamples, SPEC_FILES } from './conformance.js';
import { PNG_1x1, withoutIslands } from './helpers.js';

function viaDom(markdown: string, extensions?: readonly never[] | ReturnType<typeof extensionsOf>): ConvertedBody {
  const md = markdownForDocx(parseMarkdown(markdown, { extensions }));
  return 'dom' in md ? convertMarkdownDom(md.dom, {}) : convertHtml(md.html, {}, !md.rawHtml);
}

function parts(b: ConvertedBody) {
  // The direct writer keeps the Markdown of what Word cannot carry in source islands; the DOM path does not.
  return {
    body: withoutIslands(b.bodyXml),
    abstractNums: b.abstractNums,
    nums: b.nums,
    footnotes: b.footnotes,
    rels: b.relationships,
    warnings: b.warnings,
  };
}

describe('Markdown direct writer', () => {
  it('writes what the DOM path writes for every spec example without raw HTML', () => {
    let compared = 0;
    let viaDomOnly = 0;
    const diverging: string[] = [];
    for (const file of SPEC_FILES) {
      for (const ex of loadExamples(file)) {
        const extensions = extensionsOf(ex);
        const parse = parseMarkdown(ex.markdown, { extensions });
        const direct = parse.rawHtml ? undefined : markdownDocxBody(parse, {});
        if (!direct) {
          viaDomOnly++;
          continue;
        }
        compared++;
        const a = parts(direct);
        const b = parts(viaDom(ex.markdown, extensions));
        if (JSON.stringify(a) !== JSON.stringify(b)) diverging.push(`${file}#${ex.example}`);
      }
    }
    // Both paths are exercised by the conformance suite: most examples go direct, those with raw HTML the DOM way.
    expect(compared).toBeGreaterThan(1000);
    expect(viaDomOnly).toBeGreaterThan(100);
    expect(diverging).toEqual([]);
  });

  it('writes what the DOM path writes for a report with every construct, images and nested notes', () => {
    const md =
      `# Report\n\nIntro with *em*, **strong**, ~~gone~~, \`code\`, a [link](https://example.com "t") and ![pic](data:image/png;base64,${PNG_1x1} "title").[^a]\n\n` +
      `- one\n- [x] done\n- [ ] open\n  1. nested\n  2. again\n\n3. three\n4. four\n\n> quote\n>\n> - in a list\n\n` +
      '```js\nconst x = 1;\n\tindented\n```\n\n    code block\n\n---\n\n| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 |\n| x | **y** | `z` |\n\n' +
      '- - nested first\n\n  | t |\n  |---|\n  | u |\n\n[^a]: Note with a ref[^b] and\n\n    code\n\n[^b]: Inner note[^c].\n[^c]: Deepest[^a].\n';
    const parse = parseMarkdown(md);
    expect(parse.rawHtml).toBe(false);
    const direct = markdownDocxBody(parse, {});
    expect(direct).toBeDefined();
    expect(parts(direct!)).toEqual(parts(viaDom(md)));
  });

  it('writes notes cited many times, ending in a paragraph or a list, as the DOM path does', () => {
    const md = 'a[^p] b[^p] c[^l] d[^l] e[^l] f[^p]\n\n[^p]: A *note*.\n\n[^l]: A list note:\n\n    - one\n    - two\n';
    const direct = markdownDocxBody(parseMarkdown(md), {});
    expect(direct?.footnotes.length).toBe(6);
    expect(parts(direct!)).toEqual(parts(viaDom(md)));
  });

  it('leaves documents with raw HTML to the DOM path, which still converts them', () => {
    const parse = parseMarkdown('a <b>bold</b> word\n\n<div>block</div>\n');
    expect(parse.rawHtml).toBe(true);
    const blocks = readDocx(markdownToDocx('a <b>bold</b> word\n\n<div>block</div>\n'));
    expect(blocks.length).toBe(2);
  });
});
