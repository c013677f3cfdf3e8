/**
 * Hostile inputs for the convert engine, generated here: each ends in a valid DOCX (or fragment) or in a
 * FolioError naming the limit, within the test timeout. Time targets are measured elsewhere; what these pin
 * is that the work stays bounded (each would take minutes, or never end, without its guard).
 */
import { describe, expect, it } from 'vitest';
import { htmlToDocx, htmlToWordFragment, markdownToDocx } from '../../src/convert/index.js';
import { FolioError } from '../../src/errors.js';
import { count, PNG_1x1, textOf, unpack } from './helpers.js';

const nestedDivs = (n: number, inner: string) => '<div>'.repeat(n) + inner + '</div>'.repeat(n);
const descendantChain = (n: number, tag = 'div') => Array(n).fill(tag).join(' ');

function refused(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error('expected a FolioError');
}

describe('CSS selector matching is bounded', () => {
  it('matches a 41-compound descendant selector over 40 nested divs without backtracking', () => {
    // No match (one div short): css-select explored every choice of ancestors, ~4× per two levels.
    const miss = unpack(htmlToDocx(`<style>${descendantChain(41)} { color: red }</style>${nestedDivs(40, 'deep')}`));
    expect(textOf(miss.document)).toBe('deep');
    expect(miss.document).not.toContain('w:color');
    // A match: the same selector over one more level still applies.
    const hit = unpack(htmlToDocx(`<style>${descendantChain(41)} { color: red }</style>${nestedDivs(41, 'deep')}`));
    expect(hit.document).toContain('<w:color w:val="FF0000"/>');
  });

  it('bounds the same selector in an annotate HTML fragment', () => {
    const frag = htmlToWordFragment(`<style>${descendantChain(41)} { font-weight: bold }</style>${nestedDivs(40, 'x')}`);
    expect(textOf(frag.bodyXml)).toBe('x');
    expect(frag.bodyXml).not.toContain('<w:b/>');
  });

  it('bounds a 32 KB stylesheet of selector chains and still applies its other rules', () => {
    let css = 'p.keep { font-style: italic }\n';
    for (let i = 0; css.length < 32_000; i++) css += `${descendantChain(20 + (i % 22))} { color: red }\n`;
    const d = unpack(htmlToDocx(`<style>${css}</style>${nestedDivs(40, '<p class="keep">kept</p>')}`));
    expect(textOf(d.document)).toBe('kept');
    expect(d.document).toContain('<w:i/>');
  });

  it('matches sibling and child chains the way css-select does', () => {
    const html =
      '<style>p + p + p { font-weight: bold } div > p ~ p { font-style: italic } section p:first-child { color: blue }</style>' +
      '<div><p>a</p><p>b</p><p>c</p></div><section><div><p>d</p></div></section>';
    const ps = unpack(htmlToDocx(html)).document.match(/<w:p>.*?<\/w:p>/g)!;
    expect(ps.map((p) => [textOf(p), p.includes('<w:b/>'), p.includes('<w:i/>'), p.includes('0000FF')])).toEqual([
      ['a', false, false, false],
      ['b', false, true, false],
      ['c', true, true, false],
      ['d', false, false, true],
    ]);
  });

  it('drops a selector whose pseudo-class argument explodes, with a warning, and keeps the rest', () => {
    const css = `:is(${descendantChain(41)}) { color: red } p { font-weight: bold }`;
    const frag = htmlToWordFragment(`<style>${css}</style>${nestedDivs(40, '<p>x</p>')}`);
    expect(frag.bodyXml).toContain('<w:b/>');
    expect(frag.warnings.join(' ')).toMatch(/selector/);
  });

  it('bounds a 41-long general-sibling chain', () => {
    const css = `${Array(41).fill('p').join(' ~ ')} { color: red }`;
    const d = unpack(htmlToDocx(`<style>${css}</style>${'<p>x</p>'.repeat(40)}`));
    expect(count(d.document, '<w:p>')).toBe(40);
    expect(d.document).not.toContain('w:color');
  });

  it('bounds many selectors over many elements and many <style> elements', () => {
    let css = '';
    for (let i = 0; i < 3000; i++) css += `.c${i} p { color: red }\n`;
    const d = unpack(htmlToDocx(`<style>${css}</style>${'<p>x</p>'.repeat(500)}`));
    expect(count(d.document, '<w:p>')).toBe(500);
    const styles = unpack(htmlToDocx('<style>p { font-weight: bold }</style>'.repeat(2_500) + '<p>y</p>'));
    expect(styles.document).toContain('<w:b/>');
  });

  it('converts style="" on 50,000 elements', () => {
    let html = '';
    for (let i = 0; i < 50_000; i++) html += `<span style="margin-left:${i % 977}px">.</span>`;
    const d = unpack(htmlToDocx(`<p>${html}</p>`));
    expect(textOf(d.document)).toHaveLength(50_000);
  });
});

describe('HTML structure is bounded', () => {
  it('refuses more than 1,000,000 elements before building the DOM, naming the limit', () => {
    const e = refused(() => htmlToDocx('<br>'.repeat(1_000_001)));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/more than 1,000,000 elements/);
  });

  it('flattens 50,000-deep nesting in linear time', () => {
    for (const tag of ['li', 'table><tr><td']) {
      expect(textOf(unpack(htmlToDocx(`<${tag}>`.repeat(50_000) + 'bottom')).document)).toContain('bottom');
    }
  });

  it('keeps huge attribute values out of the work', () => {
    const d = unpack(htmlToDocx(`<p title="${'a'.repeat(5_000_000)}" class="${'b '.repeat(500_000)}" style="${'color:red;'.repeat(100_000)}">x</p>`));
    expect(textOf(d.document)).toBe('x');
  });

  it('caps the number of data-URI images decoded per document', () => {
    // Each src differs (trailing padding spaces), so each would be decoded and embedded on its own.
    let html = '';
    for (let i = 0; i < 2100; i++) html += `<img alt="i${i}" src="data:image/png;base64,${PNG_1x1.slice(0, 8)}${' '.repeat(i)}${PNG_1x1.slice(8)}">`;
    const frag = htmlToWordFragment(html);
    expect(frag.media).toHaveLength(2000);
    expect(frag.warnings.join(' ')).toMatch(/image budget/);
  });

  it('caps the data-URI text decoded per document', () => {
    const big = (i: number) => `<img src="data:image/png;base64,${'A'.repeat(19 * 1024 * 1024 + i)}">`;
    const frag = htmlToWordFragment([0, 1, 2, 3].map(big).join(''));
    expect(frag.media).toHaveLength(0);
    expect(frag.warnings.join(' ')).toMatch(/image budget/);
  });
});

describe('pathological Markdown is bounded', () => {
  it('deep brackets and unclosed links', () => {
    expect(textOf(unpack(markdownToDocx('['.repeat(50_000) + 'x' + ']'.repeat(50_000))).document)).toContain('x');
    expect(textOf(unpack(markdownToDocx('[a]('.repeat(25_000))).document)).toContain('[a](');
    expect(textOf(unpack(markdownToDocx('!['.repeat(20_000) + 'a' + '](b)'.repeat(20_000))).document)).toContain('a');
  });

  it('long emphasis and backtick runs', () => {
    expect(textOf(unpack(markdownToDocx('*'.repeat(50_000) + 'a' + '_'.repeat(50_000))).document)).toContain('a');
    expect(textOf(unpack(markdownToDocx('*a_'.repeat(30_000))).document)).toContain('a');
    expect(textOf(unpack(markdownToDocx('`'.repeat(50_000) + 'a' + '``'.repeat(25_000))).document)).toContain('a');
  });

  it('deeply nested lists and block quotes', () => {
    let list = '';
    for (let i = 0; i < 1500; i++) list += `${'  '.repeat(i)}- item ${i}\n`;
    // Past markdown-it's maxNesting (64) the deeper items are not rendered; what is pinned is that it ends.
    expect(textOf(unpack(markdownToDocx(list)).document)).toContain('item 20');
    // 50,000 list markers on one line: bounded (content past maxNesting is not rendered, as above).
    expect(unpack(markdownToDocx('- '.repeat(50_000) + 'x\n')).document).toContain('<w:body>');
    expect(textOf(unpack(markdownToDocx('>'.repeat(100_000) + ' x\n')).document)).toContain('x');
  });

  it('10,000 footnotes', () => {
    let md = '';
    for (let i = 0; i < 10_000; i++) md += `Text[^${i}].\n\n`;
    for (let i = 0; i < 10_000; i++) md += `[^${i}]: Note ${i}.\n`;
    const d = unpack(markdownToDocx(md));
    expect(count(d.part('word/footnotes.xml'), '<w:footnote w:id=')).toBe(10_000);
  }, 30_000);

  it('one footnote referenced 20,000 times', () => {
    const d = unpack(markdownToDocx('a[^1]'.repeat(20_000) + '\n\n[^1]: the note\n'));
    expect(count(d.document, '<w:footnoteReference ')).toBe(20_000);
  }, 30_000);

  it('refuses footnote copies past the budget, naming it', () => {
    const e = refused(() => markdownToDocx('a[^1]'.repeat(2_000) + `\n\n[^1]: ${'long note '.repeat(5_000)}\n`));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/footnote/);
  });

  it('30,000 task-list items', () => {
    const d = unpack(markdownToDocx('- [ ] x\n'.repeat(30_000)));
    expect(count(d.document, '☐')).toBe(30_000);
  });

  it('a 2,000-column table and a 2,000-row table', () => {
    const wide = unpack(markdownToDocx('|' + 'a|'.repeat(2000) + '\n|' + '-|'.repeat(2000) + '\n' + ('|' + 'x|'.repeat(2000) + '\n').repeat(20)));
    // 2,000 columns: 1,008 kept, as 16 tables of 63 columns (wide-tables.test.ts), each with the 21 rows.
    expect(count(wide.document, '<w:tbl>')).toBe(16);
    expect(count(wide.document, '<w:tr>')).toBe(16 * 21);
    const long = unpack(markdownToDocx('|a|b|c|\n|-|-|-|\n' + '|x|y|z|\n'.repeat(2000)));
    expect(count(long.document, '<w:tr>')).toBe(2001);
  });

  it('a header of 50,000 columns over short rows is not padded without bound', () => {
    const d = unpack(markdownToDocx('|' + 'a|'.repeat(50_000) + '\n|' + '-|'.repeat(50_000) + '\n' + 'x\n'.repeat(500)));
    expect(textOf(d.document)).toContain('a');
  });

  it('30,000 link reference definitions, and a 5 MB one', () => {
    let md = '';
    for (let i = 0; i < 30_000; i++) md += `[l${i}]: http://example.com/${i} "t"\n`;
    for (let i = 0; i < 500; i++) md += `[l${i}] `;
    expect(count(unpack(markdownToDocx(md)).document, '<w:hyperlink ')).toBe(500);
    const huge = unpack(markdownToDocx(`[a]: http://x/${'a'.repeat(5_000_000)}\n\n[a]`));
    expect(textOf(huge.document)).toBe('a');
  }, 30_000);
});

describe('the HTML depth guard scans in linear time', () => {
  it('unclosed comments, tags and raw-text elements', () => {
    // Its pattern once rescanned to the end of the input from every "<": 40,000 "<!--" took 15 s.
    for (const unit of ['<!--', '<a b', '<script x', '<style"']) {
      const d = unpack(htmlToDocx('<p>start</p>' + unit.repeat(100_000)));
      expect(textOf(d.document)).toContain('start');
    }
  });
});

describe('wide tables', () => {
  it("are split into tables of Word's 63 columns, up to 1,008 columns; cells past that are dropped and counted", () => {
    const frag = htmlToWordFragment(`<table><tr>${'<td>x</td>'.repeat(2000)}</tr></table>`);
    expect(count(frag.bodyXml, '<w:tc>')).toBe(1008);
    expect(count(frag.bodyXml, '<w:tbl>')).toBe(16);
    expect(frag.warnings.join(' ')).toMatch(/992 cells past column 1008 \(Folio's limit\) were dropped/);
  });
});
