/** The issue's bad inputs: each gives a valid DOCX (or a clear error), never a crash or a stack overflow. */
import { describe, expect, it } from 'vitest';
import { PNG } from './png.js';
import { htmlToDocx, markdownToDocx } from '../../src/convert/index.js';
import { decodeText } from '../../src/convert/text.js';
import { count, textOf, unpack } from './helpers.js';

describe('bad input', () => {
  it('replaces invalid UTF-8 instead of rejecting it', () => {
    const bytes = new Uint8Array([0x23, 0x20, 0x41, 0xff, 0xfe, 0x42, 0xc3, 0x28, 0x0a]);
    const d = unpack(markdownToDocx(decodeText(bytes)));
    expect(textOf(d.document)).toBe('A\uFFFD\uFFFDB\uFFFD(');
  });

  it('drops characters XML cannot carry', () => {
    const d = unpack(htmlToDocx('<p>a\u0001b\u000bc\uD800d</p>'));
    expect(textOf(d.document)).toBe('abcd');
  });

  it('ends autolinks followed by 200,000 punctuation characters, keeping every character', () => {
    // The last URL is itself 200 KB long: over the 2,000-character bound for a link target, it stays text.
    const cases: Array<[string, number]> = [
      [')'.repeat(200_000), 1],
      ['.'.repeat(200_000), 1],
      ['~'.repeat(200_000), 1],
      ['&a'.repeat(100_000) + ';', 0],
    ];
    for (const [tail, links] of cases) {
      const d = unpack(markdownToDocx(`see http://a.example/x${tail} end\n`));
      expect(textOf(d.document)).toBe(`see http://a.example/x${tail} end`);
      expect(count(d.document, '<w:hyperlink ')).toBe(links);
    }
  });

  it('survives 100,000-deep nesting of Markdown quotes and lists', () => {
    const quotes = unpack(markdownToDocx('>'.repeat(100_000) + ' deep\n'));
    expect(textOf(quotes.document)).toContain('deep');
    let list = '';
    for (let i = 0; i < 2000; i++) list += `${'  '.repeat(i)}- item ${i}\n`;
    const lists = unpack(markdownToDocx(list));
    expect(textOf(lists.document)).toContain('item 1');
  });

  it('survives 100,000-deep nesting of HTML tags, flattening past the bound', () => {
    for (const tag of ['div', 'ul><li', 'blockquote', 'span', 'table><tr><td']) {
      const open = `<${tag}>`.repeat(100_000);
      const d = unpack(htmlToDocx(`${open}bottom`));
      expect(textOf(d.document)).toContain('bottom');
    }
    const lists = unpack(htmlToDocx('<ul><li>'.repeat(100_000) + 'x'));
    const levels = [...lists.document.matchAll(/<w:ilvl w:val="(\d+)"\/>/g)].map((m) => Number(m[1]));
    expect(Math.max(...levels)).toBe(8);
  });

  it('bounds raw HTML nested 100,000 deep inside Markdown', () => {
    for (const tag of ['span', 'div']) {
      const d = unpack(markdownToDocx(`para\n\n${`<${tag}>`.repeat(100_000)}bottom\n`));
      expect(textOf(d.document)).toContain('bottom');
    }
  });

  it('converts a 25 MB single line', () => {
    const line = 'word '.repeat(5 * 1024 * 1024);
    const d = unpack(markdownToDocx(line));
    expect(count(d.document, '<w:p>')).toBe(1);
  }, 60_000);

  it('bounds huge or hostile data-URI images', () => {
    const huge = `<img alt="huge" src="data:image/png;base64,${'A'.repeat(21 * 1024 * 1024)}">`;
    expect(count(unpack(htmlToDocx(huge)).document, '<w:drawing>')).toBe(0);
    // A PNG whose header claims 100,000 × 100,000 pixels is refused before any decode.
    const bomb = `<img alt="bomb" src="data:image/png;base64,${PNG.header(100_000, 100_000).toString('base64')}">`;
    const d = unpack(htmlToDocx(bomb));
    expect(count(d.document, '<w:drawing>')).toBe(0);
    expect(textOf(d.document)).toBe('bomb');
    const notImage = unpack(htmlToDocx('<img src="data:image/png;base64,bm90IGFuIGltYWdl" alt="x">'));
    expect(count(notImage.document, '<w:drawing>')).toBe(0);
  });

  it('parses malformed HTML like a browser would', () => {
    const d = unpack(htmlToDocx('<p>one<p>two<b>bold<i>both</b>italic?<table><tr><td>a<td>b<tr><td>c</table><ul><li>x<li>y</ul></div></span>'));
    expect(textOf(d.document)).toContain('one');
    expect(count(d.document, '<w:tr>')).toBe(2);
    expect(count(d.document, '<w:numPr>')).toBe(2);
  });

  it('never turns javascript: or relative URLs into links', () => {
    const d = unpack(htmlToDocx('<a href="javascript:alert(1)">a</a> <a href="file:///etc/passwd">b</a>'));
    expect(d.part('word/_rels/document.xml.rels')).not.toMatch(/javascript|file:/);
  });
});
