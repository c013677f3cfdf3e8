/**
 * Equations: OMML → the math model → TeX (Markdown, `$…$` / `$$…$$`) and presentation MathML (HTML), one
 * construct at a time, with tracked changes inside math, several equations in one paragraph, display vs
 * inline, hostile text (the output stays safe to render) and the nesting bound.
 */
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown } from '../../src/convert/index.js';
import { readDocxModel } from '../../src/docx/read/reader.js';
import { MAX_MATH_DEPTH } from '../../src/docx/math/ast.js';
import { docx, mr } from './build.js';
import { activeContent } from '../convert/markdown-safety-cases.js';
import { markdownToHtml } from '../../src/convert/index.js';
import { parseDocument } from 'htmlparser2';
import { isTag, type AnyNode } from 'domhandler';
import fs from 'node:fs';
import path from 'node:path';

const inline = (omml: string) => `<w:p><w:r><w:t xml:space="preserve">x </w:t></w:r><m:oMath>${omml}</m:oMath></w:p>`;
const display = (...eqs: string[]) => `<w:p><m:oMathPara>${eqs.map((e) => `<m:oMath>${e}</m:oMath>`).join('')}</m:oMathPara></w:p>`;
const md = (body: string) => docxToMarkdown(docx(body)).markdown.trim();
const html = (body: string) => {
  const h = docxToHtml(docx(body)).html;
  return h.slice(h.indexOf('<body>') + 6, h.indexOf('</body>')).trim();
};
const tex = (omml: string) => {
  const m = /^\$\$(.*)\$\$$/s.exec(md(display(omml)));
  if (!m) throw new Error(`not display math: ${md(display(omml))}`);
  return m[1];
};
const e = (x: string) => `<m:e>${x}</m:e>`;

describe('OMML → TeX, construct by construct', () => {
  const cases: Array<[string, string, string]> = [
    ['fraction', `<m:f>${`<m:num>${mr('a')}</m:num><m:den>${mr('b')}</m:den>`}</m:f>`, '\\frac{a}{b}'],
    ['linear fraction', `<m:f><m:fPr><m:type m:val="lin"/></m:fPr><m:num>${mr('a')}</m:num><m:den>${mr('b')}</m:den></m:f>`, 'a/b'],
    ['skewed fraction', `<m:f><m:fPr><m:type m:val="skw"/></m:fPr><m:num>${mr('a')}</m:num><m:den>${mr('b')}</m:den></m:f>`, '{}^{a}/_{b}'],
    [
      'fraction without bar',
      `<m:f><m:fPr><m:type m:val="noBar"/></m:fPr><m:num>${mr('n')}</m:num><m:den>${mr('k')}</m:den></m:f>`,
      '\\genfrac{}{}{0pt}{}{n}{k}',
    ],
    ['square root (degree hidden)', `<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/>${e(mr('x'))}</m:rad>`, '\\sqrt{x}'],
    ['root with degree', `<m:rad><m:deg>${mr('3')}</m:deg>${e(mr('x'))}</m:rad>`, '\\sqrt[3]{x}'],
    [
      'sum with limits under and over',
      `<m:nary><m:naryPr><m:chr m:val="∑"/><m:limLoc m:val="undOvr"/></m:naryPr><m:sub>${mr('k=0')}</m:sub><m:sup>${mr('n')}</m:sup>${e(mr('k'))}</m:nary>`,
      '\\sum_{k=0}^{n}k',
    ],
    [
      'integral (default character, scripts)',
      `<m:nary><m:sub>${mr('0')}</m:sub><m:sup>${mr('1')}</m:sup>${e(mr('xdx'))}</m:nary>`,
      '\\int_{0}^{1}{xdx}',
    ],
    [
      'integral with limits under/over',
      `<m:nary><m:naryPr><m:limLoc m:val="undOvr"/></m:naryPr><m:sub>${mr('0')}</m:sub><m:sup>${mr('1')}</m:sup>${e(mr('x'))}</m:nary>`,
      '\\int\\limits_{0}^{1}x',
    ],
    [
      'sum with hidden limits',
      `<m:nary><m:naryPr><m:chr m:val="∏"/><m:subHide m:val="1"/><m:supHide m:val="on"/></m:naryPr><m:sub/><m:sup/>${e(mr('a'))}</m:nary>`,
      '\\prod a',
    ],
    ['subscript', `<m:sSub>${e(mr('a'))}<m:sub>${mr('n')}</m:sub></m:sSub>`, 'a_{n}'],
    ['superscript of a group', `<m:sSup>${e(mr('ab'))}<m:sup>${mr('2')}</m:sup></m:sSup>`, '{ab}^{2}'],
    ['sub- and superscript', `<m:sSubSup>${e(mr('x'))}<m:sub>${mr('i')}</m:sub><m:sup>${mr('2')}</m:sup></m:sSubSup>`, 'x_{i}^{2}'],
    ['prescripts', `<m:sPre><m:sub>${mr('1')}</m:sub><m:sup>${mr('2')}</m:sup>${e(mr('X'))}</m:sPre>`, '{}_{1}^{2}X'],
    ['accent (default hat)', `<m:acc>${e(mr('x'))}</m:acc>`, '\\hat{x}'],
    ['accent vector', `<m:acc><m:accPr><m:chr m:val="\u20d7"/></m:accPr>${e(mr('v'))}</m:acc>`, '\\vec{v}'],
    ['bar over', `<m:bar><m:barPr><m:pos m:val="top"/></m:barPr>${e(mr('z'))}</m:bar>`, '\\overline{z}'],
    ['bar under (default)', `<m:bar>${e(mr('z'))}</m:bar>`, '\\underline{z}'],
    ['delimiters with separators', `<m:d><m:dPr><m:sepChr m:val=","/></m:dPr>${e(mr('a'))}${e(mr('b'))}</m:d>`, '\\left(a,b\\right)'],
    ['brackets and bars', `<m:d><m:dPr><m:begChr m:val="["/><m:endChr m:val="|"/></m:dPr>${e(mr('a'))}</m:d>`, '\\left\\lbrack a\\right\\vert'],
    ['invisible delimiter', `<m:d><m:dPr><m:begChr m:val="{"/><m:endChr m:val=""/></m:dPr>${e(mr('a'))}</m:d>`, '\\left\\{a\\right.'],
    [
      'matrix in parentheses',
      `<m:d>${e(`<m:m><m:mr>${e(mr('1'))}${e(mr('0'))}</m:mr><m:mr>${e(mr('0'))}${e(mr('1'))}</m:mr></m:m>`)}</m:d>`,
      '\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}',
    ],
    ['bare matrix', `<m:m><m:mr>${e(mr('a'))}${e(mr('b'))}</m:mr></m:m>`, '\\begin{matrix} a & b \\end{matrix}'],
    ['equation array with alignment', `<m:eqArr>${e(mr('x&=1'))}${e(mr('y&=2'))}</m:eqArr>`, '\\begin{aligned} x & =1 \\\\ y & =2 \\end{aligned}'],
    ['function', `<m:func><m:fName>${mr('sin', '<m:rPr><m:sty m:val="p"/></m:rPr>')}</m:fName>${e(mr('x'))}</m:func>`, '\\sin x'],
    [
      'unknown function name',
      `<m:func><m:fName>${mr('sgn', '<m:rPr><m:sty m:val="p"/></m:rPr>')}</m:fName>${e(mr('x'))}</m:func>`,
      '\\operatorname{sgn}x',
    ],
    [
      'limit under lim',
      `<m:func><m:fName><m:limLow>${e(mr('lim', '<m:rPr><m:sty m:val="p"/></m:rPr>'))}<m:lim>${mr('n→∞')}</m:lim></m:limLow></m:fName>${e(mr('a'))}</m:func>`,
      '\\lim_{n\\rightarrow\\infty}a',
    ],
    ['upper limit', `<m:limUpp>${e(mr('x'))}<m:lim>${mr('def')}</m:lim></m:limUpp>`, '\\overset{def}{x}'],
    ['group character (underbrace)', `<m:groupChr>${e(mr('a+b'))}</m:groupChr>`, '\\underbrace{a+b}'],
    [
      'group character over',
      `<m:groupChr><m:groupChrPr><m:chr m:val="⏞"/><m:pos m:val="top"/></m:groupChrPr>${e(mr('a'))}</m:groupChr>`,
      '\\overbrace{a}',
    ],
    ['box', `<m:box>${e(mr('a'))}</m:box>`, 'a'],
    ['border box', `<m:borderBox>${e(mr('E'))}</m:borderBox>`, '\\boxed{E}'],
    ['hidden phantom', `<m:phant><m:phantPr><m:show m:val="0"/></m:phantPr>${e(mr('x'))}</m:phant>`, '\\phantom{x}'],
    ['shown phantom', `<m:phant>${e(mr('x'))}</m:phant>`, 'x'],
    ['normal text run', mr('if x', '<m:rPr><m:nor/></m:rPr>'), '\\text{if x}'],
    ['plain-style word', mr('max', '<m:rPr><m:sty m:val="p"/></m:rPr>'), '\\mathrm{max}'],
    ['Greek and operators', mr('α≤β±γ×∞'), '\\alpha\\leq\\beta\\pm\\gamma\\times\\infty'],
    ['command before a letter keeps a space', mr('πr'), '\\pi r'],
  ];
  for (const [name, omml, want] of cases) it(name, () => expect(tex(omml)).toBe(want));
});

describe('OMML → MathML', () => {
  it('writes presentation MathML with the TeX as its annotation', () => {
    const out = html(display(`<m:f><m:num>${mr('a')}</m:num><m:den>${mr('2')}</m:den></m:f>`));
    expect(out).toBe(
      '<p><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mfrac><mi>a</mi><mn>2</mn></mfrac><annotation encoding="application/x-tex">\\frac{a}{2}</annotation></semantics></math></p>',
    );
  });

  const cases: Array<[string, string, string]> = [
    ['radical with degree', `<m:rad><m:deg>${mr('3')}</m:deg>${e(mr('x'))}</m:rad>`, '<mroot><mi>x</mi><mn>3</mn></mroot>'],
    [
      'n-ary under/over',
      `<m:nary><m:naryPr><m:chr m:val="∑"/><m:limLoc m:val="undOvr"/></m:naryPr><m:sub>${mr('i')}</m:sub><m:sup>${mr('n')}</m:sup>${e(mr('i'))}</m:nary>`,
      '<munderover><mo largeop="true">∑</mo><mi>i</mi><mi>n</mi></munderover>',
    ],
    [
      'sub/sup',
      `<m:sSubSup>${e(mr('x'))}<m:sub>${mr('i')}</m:sub><m:sup>${mr('2')}</m:sup></m:sSubSup>`,
      '<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>',
    ],
    [
      'prescripts',
      `<m:sPre><m:sub/><m:sup>${mr('2')}</m:sup>${e(mr('X'))}</m:sPre>`,
      '<mmultiscripts><mi>X</mi><mprescripts/><none/><mn>2</mn></mmultiscripts>',
    ],
    ['matrix', `<m:m><m:mr>${e(mr('a'))}${e(mr('b'))}</m:mr></m:m>`, '<mtable><mtr><mtd><mi>a</mi></mtd><mtd><mi>b</mi></mtd></mtr></mtable>'],
    [
      'equation array columns',
      `<m:eqArr>${e(mr('x&=1'))}</m:eqArr>`,
      '<mtable><mtr><mtd><mi>x</mi></mtd><mtd><mrow><mo>=</mo><mn>1</mn></mrow></mtd></mtr></mtable>',
    ],
    [
      'delimiters',
      `<m:d>${e(mr('a'))}${e(mr('b'))}</m:d>`,
      '<mrow><mo fence="true">(</mo><mi>a</mi><mo separator="true">|</mo><mi>b</mi><mo fence="true">)</mo></mrow>',
    ],
    [
      'function',
      `<m:func><m:fName>${mr('cos', '<m:rPr><m:sty m:val="p"/></m:rPr>')}</m:fName>${e(mr('θ'))}</m:func>`,
      '<mrow><mi>cos</mi><mo>\u2061</mo><mi>θ</mi></mrow>',
    ],
    ['accent', `<m:acc>${e(mr('x'))}</m:acc>`, '<mover accent="true"><mi>x</mi><mo>^</mo></mover>'],
    ['border box', `<m:borderBox>${e(mr('E'))}</m:borderBox>`, '<menclose notation="box"><mi>E</mi></menclose>'],
    ['phantom', `<m:phant><m:phantPr><m:show m:val="off"/></m:phantPr>${e(mr('x'))}</m:phant>`, '<mphantom><mi>x</mi></mphantom>'],
    ['numbers and normal text', `${mr('3.14')}${mr('if', '<m:rPr><m:nor/></m:rPr>')}`, '<mrow><mn>3.14</mn><mtext>if</mtext></mrow>'],
    [
      'fraction without bar',
      `<m:f><m:fPr><m:type m:val="noBar"/></m:fPr><m:num>${mr('n')}</m:num><m:den>${mr('k')}</m:den></m:f>`,
      '<mfrac linethickness="0"><mi>n</mi><mi>k</mi></mfrac>',
    ],
  ];
  for (const [name, omml, want] of cases) it(name, () => expect(html(display(omml))).toContain(want));
});

describe('equations in text', () => {
  it('an inline equation is $…$ in its paragraph; display math is $$…$$', () => {
    expect(md(inline(`<m:sSup>${e(mr('r'))}<m:sup>${mr('2')}</m:sup></m:sSup>`))).toBe('x $r^{2}$');
    expect(md(display(mr('E=m'), mr('F=ma')))).toBe('$$E=m$$$$F=ma$$');
    expect(html(inline(mr('a')))).toContain('x <math xmlns="http://www.w3.org/1998/Math/MathML"><semantics>');
  });

  it('several equations in one paragraph stay separate', () => {
    const body = `<w:p><m:oMath>${mr('a')}</m:oMath><w:r><w:t xml:space="preserve"> and </w:t></w:r><m:oMath>${mr('b')}</m:oMath><m:oMath>${mr('c')}</m:oMath></w:p>`;
    const model = readDocxModel(docx(body));
    const p = model.blocks[0]!;
    expect(p.t === 'para' && p.inlines.map((i) => i.t)).toEqual(['math', 'text', 'math', 'math']);
    expect(md(body)).toBe('$a$ and $b$$c$');
  });

  it('tracked changes inside math: deletions dropped, insertions kept', () => {
    const del = `${mr('A=')}<m:r><w:del w:id="1" w:author="x"><m:t>2</m:t></w:del></m:r>${mr('π')}<m:sSup>${e(mr('r'))}<m:sup>${mr('2')}</m:sup></m:sSup>`;
    expect(tex(del)).toBe('A=\\pi r^{2}');
    const ins = `${mr('A=')}<m:r><w:ins w:id="1" w:author="x"><m:t>2</m:t></w:ins></m:r>${mr('π')}`;
    expect(tex(ins)).toBe('A=2\\pi');
    const around = `${mr('a')}<w:del w:id="2" w:author="x">${mr('b')}</w:del><w:ins w:id="3" w:author="x">${mr('c')}</w:ins>`;
    expect(tex(around)).toBe('ac');
  });

  it('text a renderer could read as HTML, a link or the end of the math stays math', () => {
    const hostile = mr('&lt;script&gt;alert(1)&lt;/script&gt;[x](javascript:alert(1))$`|');
    const out = md(inline(hostile));
    expect(out).not.toMatch(/<|\]\(|`/);
    expect(activeContent(markdownToHtml(out))).toEqual([]);
    const txt = md(inline(mr('a', '<m:rPr><m:nor/></m:rPr>') + mr('&lt;img src=x onerror=alert(1)&gt;[a](javascript:x)', '<m:rPr><m:nor/></m:rPr>')));
    expect(txt).not.toMatch(/<|\]\(/);
    expect(activeContent(markdownToHtml(txt))).toEqual([]);
    // MathML: text escaped, only the writer's elements.
    const h = html(inline(hostile));
    expect(h).not.toContain('<script');
    expect(h).toContain('<mo>&lt;</mo><mi>s</mi>');
  });

  it('an equation nested past the bound is kept as its text, with a warning', () => {
    let omml = mr('x');
    for (let i = 0; i < MAX_MATH_DEPTH + 10; i++) omml = `<m:f><m:num>${omml}</m:num><m:den>${mr(String(i % 10))}</m:den></m:f>`;
    const r = docxToMarkdown(docx(display(omml)));
    expect(r.warnings.some((w) => w.includes('nested more than'))).toBe(true);
    expect(r.markdown.match(/\\frac/g)!.length).toBeLessThanOrEqual(MAX_MATH_DEPTH + 1);
    expect(r.markdown).toContain('x');
  });

  it('a hostile run of equations counts against the node budget', () => {
    const body = `<w:p>${`<m:oMath>${mr('a')}</m:oMath>`.repeat(3000)}</w:p>`;
    expect(() => readDocxModel(docx(body), { limits: { maxNodes: 2000 } })).toThrow(/too large/);
  });

  it('writes only presentation-MathML elements and attributes of its own, for every construct and the fixtures', () => {
    const ELEMENTS = new Set(
      'math semantics annotation mrow mi mn mo mtext mfrac msqrt mroot msub msup msubsup mmultiscripts mprescripts none munder mover munderover mtable mtr mtd menclose mphantom'.split(
        ' ',
      ),
    );
    const ATTRS = new Set([
      'xmlns',
      'display',
      'encoding',
      'mathvariant',
      'linethickness',
      'bevelled',
      'largeop',
      'accent',
      'accentunder',
      'fence',
      'separator',
      'notation',
    ]);
    const all = [
      ...['NewDocxDocuments_Equation', 'TestFiles_WC_WC031-Two-Maths-After', 'TestFiles_HC031-Complicated-Document'].map(
        (f) => docxToHtml(new Uint8Array(fs.readFileSync(path.join(import.meta.dirname, `../fixtures/docx-wild/powertools--${f}.docx`)))).html,
      ),
      html(
        display(
          `<m:d><m:e><m:m><m:mr><m:e>${mr('a')}</m:e></m:mr></m:m></m:e></m:d><m:sPre><m:sub/><m:sup>${mr('2')}</m:sup><m:e>${mr('X')}</m:e></m:sPre><m:borderBox><m:e>${mr('&lt;b onclick=x&gt;')}</m:e></m:borderBox><m:phant><m:phantPr><m:show m:val="0"/></m:phantPr><m:e>${mr('y')}</m:e></m:phant>`,
        ),
      ),
    ];
    let seen = 0;
    const walk = (n: AnyNode, inMath: boolean) => {
      if (!isTag(n)) return;
      const here = inMath || n.name === 'math';
      if (here) {
        seen++;
        expect(ELEMENTS.has(n.name), n.name).toBe(true);
        for (const a of Object.keys(n.attribs)) expect(ATTRS.has(a), `${n.name} ${a}`).toBe(true);
      }
      for (const c of n.children) walk(c, here);
    };
    for (const h of all) for (const c of parseDocument(h).children) walk(c, false);
    expect(seen).toBeGreaterThan(50);
  });
});
