/**
 * TeX math in Markdown → Word equations and back (issue 27): pandoc's `$` rules, the OMML written for each
 * construct, round trips that hold (Markdown → DOCX → Markdown, and a Word equation → Markdown → DOCX →
 * Markdown), HTML math spans, and the bounds on hostile input (long sources, deep nesting, many dollars).
 */
import { describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { docxToMarkdown, htmlToDocx, markdownToDocx, markdownToHtml } from '../../src/convert/index.js';
import { MAX_MATH_SOURCE } from '../../src/convert/markdown-math.js';
import { docx, mr } from '../docx/build.js';

const body = (d: Uint8Array) => strFromU8(unzipSync(d)['word/document.xml']!);
const roundTrip = (md: string) => docxToMarkdown(markdownToDocx(md)).markdown.trim();

describe('$ rules (pandoc tex_math_dollars)', () => {
  const html = (md: string) => markdownToHtml(md);
  it('reads $…$ and $$…$$ as math', () => {
    expect(html('$x^2$')).toContain('<span class="math inline">\\(x^2\\)</span>');
    expect(html('a $$\\frac{1}{2}$$ b')).toContain('<span class="math display">\\[\\frac{1}{2}\\]</span>');
    expect(html('$$\na+b\n$$')).toContain('<span class="math display">');
  });
  it('leaves prices, escaped dollars and spaced dollars as text', () => {
    for (const text of ['costs $5 and $10', '\\$x$', '$ x$', '$x $', '$x$5', 'a $ b']) expect(html(text)).not.toContain('math');
  });
});

describe('Markdown → DOCX equations', () => {
  const cases: Array<[string, string[]]> = [
    ['$\\frac{a}{b}$', ['<m:f>', '<m:num>', '<m:den>']],
    ['$\\sqrt{x}+\\sqrt[3]{y}$', ['<m:degHide m:val="1"/>', '<m:deg><m:r>']],
    ['$\\sum_{i=1}^{n} i$', ['<m:chr m:val="∑"/>', '<m:limLoc m:val="undOvr"/>', '<m:sub>', '<m:sup>']],
    ['$\\int_0^1 x\\,dx$', ['<m:limLoc m:val="subSup"/>']],
    ['$x_i^2 + y_j + z^k$', ['<m:sSubSup>', '<m:sSub>', '<m:sSup>']],
    ['$\\hat{x}\\vec{v}$', ['<m:acc><m:accPr><m:chr m:val="̂"/>', '<m:chr m:val="⃗"/>']],
    ['$\\overline{z}$', ['<m:bar><m:barPr><m:pos m:val="top"/>']],
    ['$\\left[ a \\middle| b \\right)$', ['<m:begChr m:val="["/><m:sepChr m:val="|"/><m:endChr m:val=")"/>']],
    ['$\\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$', ['<m:m><m:mr>', '<m:begChr m:val="["/>']],
    ['$\\begin{aligned} x &= 1 \\\\ y &= 2 \\end{aligned}$', ['<m:eqArr>', '<m:t xml:space="preserve">x&amp;=1</m:t>']],
    ['$\\lim_{n\\to\\infty} a_n$', ['<m:func><m:fName><m:limLow>', '<m:t xml:space="preserve">lim</m:t>', '→∞']],
    ['$\\sin x$', ['<m:func><m:fName><m:r><m:rPr><m:sty m:val="p"/>']],
    ['$\\underbrace{a+b}_{n}$', ['<m:limLow><m:e><m:groupChr>']],
    ['$\\text{if } x < 0$', ['<m:nor/>']],
    ['$\\boxed{E}$', ['<m:borderBox>']],
    ['$\\binom{n}{k}$', ['<m:type m:val="noBar"/>']],
  ];
  for (const [md, parts] of cases) {
    it(md, () => {
      const xml = body(markdownToDocx(md));
      expect(xml).toContain('<m:oMath>');
      for (const p of parts) expect(xml).toContain(p);
    });
  }

  it('writes display math as m:oMathPara, declares the math namespace', () => {
    const xml = body(markdownToDocx('$$E=mc^2$$'));
    expect(xml).toContain('<m:oMathPara><m:oMath>');
    expect(xml).toContain('xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"');
  });

  it('reads pandoc-style math spans in HTML', () => {
    expect(body(htmlToDocx('<p>Area <span class="math inline">\\(\\pi r^2\\)</span></p>'))).toContain('<m:sSup>');
    expect(body(htmlToDocx('<p><span class="math">not tex</span></p>'))).not.toContain('<m:oMath>');
  });
});

describe('round trips', () => {
  const equations = [
    '$A=\\pi r^{2}$',
    '$$\\sum_{k=0}^{n}\\binom{n}{k}x^{k}a^{n-k}$$',
    '$\\frac{-b\\pm\\sqrt{b^{2}-4ac}}{2a}$',
    '$\\lim_{n\\rightarrow\\infty}\\left(1+\\frac{1}{n}\\right)^{n}$',
    '$\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}$',
    '$\\int_{0}^{\\infty}e^{-x^{2}}dx=\\frac{\\sqrt{\\pi}}{2}$',
    '$f(x)=\\begin{cases} 1 & x\\gt 0 \\\\ 0 & \\text{otherwise} \\end{cases}$',
    '$\\hat{x}\\overline{z}\\vec{v}\\mathrm{d}x$',
  ];
  for (const eq of equations) {
    it(`${eq}: Markdown → DOCX → Markdown is stable after one pass`, () => {
      const once = roundTrip(`Text ${eq} text.`);
      expect(once).toMatch(/\$/);
      expect(roundTrip(once)).toBe(once);
    });
  }

  it('a Word equation comes back as the same equation after Markdown → DOCX → Markdown', () => {
    const omml = `<m:oMathPara><m:oMath><m:f><m:num>${mr('-b±')}<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e><m:sSup><m:e>${mr('b')}</m:e><m:sup>${mr('2')}</m:sup></m:sSup>${mr('-4ac')}</m:e></m:rad></m:num><m:den>${mr('2a')}</m:den></m:f></m:oMath></m:oMathPara>`;
    const md = docxToMarkdown(docx(`<w:p>${omml}</w:p>`)).markdown.trim();
    expect(md).toBe('$$\\frac{-b\\pm\\sqrt{b^{2}-4ac}}{2a}$$');
    expect(roundTrip(md)).toBe(md);
  });

  it('text with dollars round-trips as text', () => {
    expect(roundTrip('It costs \\$5, or $10 with $x$ tax.')).toBe('It costs \\$5, or \\$10 with $x$ tax.');
  });
});

describe('bounds on hostile math', () => {
  it('an equation longer than the bound stays text', () => {
    const long = `$${'x+'.repeat(MAX_MATH_SOURCE)}x$`;
    expect(body(markdownToDocx(long))).not.toContain('<m:oMath>');
  });

  it('deeply nested groups and fractions are read without overflowing, deeper content as text', () => {
    const deep = `$${'{'.repeat(3000)}x${'}'.repeat(3000)}$`;
    expect(body(markdownToDocx(deep))).toContain('<m:oMath>');
    const fracs = `$${'\\frac{1}{'.repeat(500)}x${'}'.repeat(500)}$`;
    const xml = body(markdownToDocx(fracs));
    expect((xml.match(/<m:f>/g) ?? []).length).toBeLessThanOrEqual(40);
  });

  it('many dollars without a closing one are read in linear time', () => {
    const text = '$a '.repeat(100_000) + '$$b '.repeat(20_000);
    const t0 = performance.now();
    markdownToHtml(text);
    expect(performance.now() - t0).toBeLessThan(3000);
  });
});
