/**
 * Markdown that Folio writes from a DOCX is safe to render (src/convert/markdown-safety.ts, issue 23): the
 * output of docxToMarkdown is rendered with markdown-it (raw HTML on, every target accepted) and commonmark.js,
 * and the HTML read as a browser reads it must hold no script, no event handler and no javascript:, vbscript:
 * or data:text/html target — for generated hostile link targets, hostile raw HTML in forged source islands,
 * and random text full of Markdown syntax (which must also come back as the same text). Ordinary links,
 * images and harmless islands survive and render to the same target.
 */
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { docxToMarkdown, markdownToDocx } from '../../src/convert/index.js';
import { modelToMarkdown } from '../../src/convert/docx-markdown.js';
import { islandProblem, markdownDestination, safeTarget } from '../../src/convert/markdown-safety.js';
import type { Block, DocModel, Inline, Marks } from '../../src/docx/read/model.js';
import {
  HOSTILE_ISLANDS,
  HOSTILE_TARGETS,
  ORDINARY_ISLANDS,
  ORDINARY_TARGETS,
  RENDERERS,
  elementsOf,
  encodedVariants,
  forgedIslandDocx,
  linkDocx,
  renderedHrefs,
  renderedProblems,
  schemeOf,
} from './markdown-safety-cases.js';

/** HTML5's decoding of an attribute value (htmlparser2), applied twice: a target double-encoded counts too. */
function htmlDecoded(value: string): string {
  let v = value;
  for (let k = 0; k < 2; k++) {
    const el = elementsOf(`<a href="${v.replace(/"/g, '&quot;')}">`)[0];
    v = el?.attribs.href ?? v;
  }
  return v;
}

const UNSAFE = ['javascript', 'vbscript', 'data'];
const tolerantDecode = (s: string) =>
  s.replace(/(%[0-9a-f]{2})+/gi, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });

describe('link targets from a DOCX', () => {
  it(`drops every target that decodes to javascript:, vbscript: or data: (${HOSTILE_TARGETS.length} generated), and nothing rendered is active`, () => {
    const { markdown, warnings } = docxToMarkdown(linkDocx(HOSTILE_TARGETS));
    expect(renderedProblems(markdown)).toEqual([]);
    for (const [renderer, hrefs] of Object.entries(renderedHrefs(markdown))) {
      for (const h of hrefs) expect(UNSAFE, `${renderer}: ${h}`).not.toContain(schemeOf(h));
    }
    // Every link's text is kept, and the ones a renderer would decode to an unsafe scheme are not links.
    HOSTILE_TARGETS.forEach((t, n) => {
      expect(markdown).toContain(`link ${n}`);
      const decoded = htmlDecoded(t);
      if (UNSAFE.includes(schemeOf(decoded))) {
        for (const render of Object.values(RENDERERS)) expect(render(markdown)).not.toMatch(new RegExp(`<a [^>]*>link ${n}</a>`));
        expect(markdown, `${JSON.stringify(t)} kept as a link`).not.toMatch(new RegExp(`\\[link ${n}\\]\\(`));
      }
    });
    expect(warnings.join('\n')).toMatch(/dropped \(their text kept\)/);
  });

  it('500 randomly encoded javascript: targets: none renders as a link to javascript:', () => {
    const targets = encodedVariants(500, 23);
    const { markdown } = docxToMarkdown(linkDocx(targets));
    expect(renderedProblems(markdown)).toEqual([]);
    let dropped = 0;
    targets.forEach((t, n) => {
      // The reader keeps a target without its controls (src/docx/read/inlines.ts safeHref): judged as kept.
      // eslint-disable-next-line no-control-regex
      if (schemeOf(htmlDecoded(t.replace(/[\u0000-\u001f\u007f]/g, ''))) !== 'javascript') return;
      dropped++;
      expect(markdown, JSON.stringify(t)).not.toMatch(new RegExp(`\\[link ${n}\\]\\(`));
    });
    // Most variants decode to javascript: (a reference without `;` before a digit decodes to another character).
    expect(dropped).toBeGreaterThan(400);
  });

  it('the issue case: [click](<&#106;avascript:alert(1)>) is no longer written', () => {
    const { markdown } = docxToMarkdown(linkDocx(['&#106;avascript:alert(1)']));
    expect(markdown).toBe('link 0\n');
  });

  it('also in table cells (a `|` in a target must not end the cell)', () => {
    const { markdown } = docxToMarkdown(linkDocx([...HOSTILE_TARGETS.slice(0, 20), 'https://example.com/a|b'], { table: true }));
    expect(renderedProblems(markdown)).toEqual([]);
    for (const hrefs of Object.values(renderedHrefs(markdown))) expect(hrefs.map(tolerantDecode)).toContain('https://example.com/a|b');
  });

  it('keeps ordinary targets, and every renderer reads back the same target', () => {
    const targets = ORDINARY_TARGETS;
    const { markdown, warnings } = docxToMarkdown(linkDocx(targets));
    expect(warnings).toEqual([]);
    expect(renderedProblems(markdown)).toEqual([]);
    for (const [renderer, hrefs] of Object.entries(renderedHrefs(markdown))) {
      expect(hrefs.map(tolerantDecode), renderer).toEqual(targets.map((t) => tolerantDecode(t).trim()));
    }
  });

  it('writes destinations that markdown-it and commonmark.js decode to exactly the target', () => {
    const targets = ['a&amp;b', 'a&#106;b', 'a\\&b', 'a(b))', '<a>', 'a b\tc', 'a\\\\b', 'a|b', 'a"b\'c', 'a*b_c`d'];
    for (const t of targets) {
      const md = `[x](${markdownDestination(t)})`;
      for (const [renderer, hrefs] of Object.entries(renderedHrefs(md))) expect(hrefs.map(tolerantDecode), `${renderer}: ${md}`).toEqual([t]);
    }
  });

  it('judges targets after decoding (the rule the HTML writer applies, on what a renderer sees)', () => {
    for (const t of [
      '&#106;avascript:x',
      'java&Tab;script:x',
      'JAVASCRIPT:x',
      'java%73cript:x',
      '&#x76;bscript:x',
      'data:text/html,x',
      'file:///etc/passwd',
      'blob:x',
    ])
      expect(safeTarget(t, 'link'), t).toBe(false);
    for (const t of ['https://a.b/', 'mailto:a@b.c', 'a/b', '#x', '', 'data:image/png;base64,AAAA'.replace('data', 'https')])
      expect(safeTarget(t, 'link'), t).toBe(true);
    expect(safeTarget('data:image/png;base64,AAAA', 'image')).toBe(true);
    expect(safeTarget('data:image/png;base64,AAAA', 'link')).toBe(false);
    expect(safeTarget('data:image/svg+xml;base64,AAAA', 'image')).toBe(false);
  });
});

describe('pictures', () => {
  const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

  it('a picture from the DOCX renders as a data:image/png <img> with both renderers', () => {
    const { markdown } = docxToMarkdown(markdownToDocx(`Before.\n\n![a "logo" | x](${PNG})\n\nAfter.\n`));
    expect(renderedProblems(markdown)).toEqual([]);
    for (const render of Object.values(RENDERERS)) {
      const imgs = elementsOf(render(markdown)).filter((e) => e.name === 'img');
      expect(imgs.length).toBe(1);
      expect(imgs[0]!.attribs.src).toMatch(/^data:image\/png;base64,/);
    }
  });

  it('a model picture of a type that is not an image is dropped to its alt text', () => {
    const warnings = new Set<string>();
    const doc: DocModel = {
      blocks: [
        {
          t: 'para',
          f: {},
          inlines: [{ t: 'image', alt: 'alt text', data: { mime: 'text/html', bytes: new TextEncoder().encode('<script>alert(1)</script>') } }],
        },
      ],
      notes: [],
      warnings: [],
    };
    const md = modelToMarkdown(doc, warnings);
    expect(md).toBe('alt text\n');
    expect([...warnings].join()).toMatch(/image\(s\) whose source/);
  });
});

describe('source islands', () => {
  it(`writes what Word shows instead of a forged island's unsafe Markdown (${HOSTILE_ISLANDS.length} cases), with a warning`, () => {
    const { markdown, warnings } = docxToMarkdown(forgedIslandDocx(HOSTILE_ISLANDS));
    expect(renderedProblems(markdown)).toEqual([]);
    HOSTILE_ISLANDS.forEach((_, n) => expect(markdown).toContain(`Shown **${n}** here.`));
    expect(warnings.join('\n')).toContain(
      `${HOSTILE_ISLANDS.length} block(s) of kept Markdown held HTML or link targets that are not safe to render`,
    );
  });

  it('each hostile island alone is refused, and says why', () => {
    for (const s of HOSTILE_ISLANDS) expect(islandProblem(s), s).toBeDefined();
  });

  it('an island that would hijack a picture reference of the Markdown is refused', () => {
    expect(islandProblem('[FOLIO-IMAGE-1]: https://example.com/other.png')).toBeDefined();
  });

  it('keeps harmless islands verbatim, forged or Folio-made', () => {
    const forged = docxToMarkdown(forgedIslandDocx(ORDINARY_ISLANDS));
    expect(forged.warnings).toEqual([]);
    for (const s of ORDINARY_ISLANDS) expect(forged.markdown).toContain(s);
    expect(renderedProblems(forged.markdown)).toEqual([]);
    for (const s of ORDINARY_ISLANDS) {
      const md = s + '\n';
      expect(docxToMarkdown(markdownToDocx(md)).markdown).toBe(md);
    }
  });

  it('a Folio-made DOCX from Markdown with a script: the content, not the script (trustIslands gives it back)', () => {
    const md = 'Intro.\n\n<script>alert(1)</script>\n\n<div onclick="x()">hi <b>there</b></div>\n';
    const docx = markdownToDocx(md);
    const safe = docxToMarkdown(docx);
    expect(renderedProblems(safe.markdown)).toEqual([]);
    expect(safe.markdown).toContain('hi **there**');
    expect(docxToMarkdown(docx, { trustIslands: true }).markdown).toBe(md);
  });
});

// ───────────── text round trip (fuzz) ─────────────

/** mulberry32: a small seeded generator, so a failure is reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ...'abcXYZ019 \\`*_[]<>&#+-=|!~():.;"\'{}^$%@/?',
  ' ',
  '  ',
  '&amp;',
  '&#65;',
  '&copy;',
  '&#x41;',
  '1.',
  '2)',
  '- ',
  '+ ',
  '# ',
  '> ',
  '---',
  '===',
  '***',
  '___',
  '<div>',
  '<script>',
  '<!--',
  '-->',
  '<?',
  '<![CDATA[',
  '[^1]',
  '[x]: y',
  '``',
  '~~~',
  '```',
  '<http://a.b>',
  '![a](b)',
  '[a](javascript:alert(1))',
  '\u00a0',
  'é',
];

function randomText(r: () => number, max: number): string {
  let s = '';
  const n = 1 + Math.floor(r() * max);
  for (let k = 0; k < n; k++) s += PIECES[Math.floor(r() * PIECES.length)]!;
  return s;
}

function randomInlines(r: () => number, opts: { code: boolean; strike?: boolean }): Inline[] {
  const out: Inline[] = [];
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const m: Marks = {};
    if (r() < 0.25) m.b = true;
    if (r() < 0.25) m.i = true;
    if (opts.strike !== false && r() < 0.15) m.s = true;
    if (opts.code && r() < 0.1) m.code = true;
    const text = randomText(r, 8);
    if (r() < 0.1) out.push({ t: 'link', href: 'https://example.com/x', children: [{ t: 'text', text, m }] });
    else out.push({ t: 'text', text, m });
  }
  return out;
}

const textOfInlines = (list: Inline[]): string =>
  list.map((i) => (i.t === 'text' ? i.text : i.t === 'link' ? textOfInlines(i.children) : '')).join('');

/** The text content of rendered HTML, white space runs as one space. */
function renderedText(html: string): string {
  let text = '';
  new Parser({ ontext: (t) => (text += t) }, { decodeEntities: true }).end(html);
  return text.replace(/[ \t\r\n]+/g, ' ').trim();
}

const norm = (s: string) => s.replace(/[ \t\r\n]+/g, ' ').trim();

describe('text round trip', () => {
  it('random text full of Markdown syntax renders as that text (markdown-it), and nothing rendered is active', () => {
    const r = rng(23);
    const render = RENDERERS['markdown-it']!;
    const failures: string[] = [];
    for (let n = 0; n < 2000; n++) {
      const kind = Math.floor(r() * 5);
      const inl = randomInlines(r, { code: kind !== 2 });
      const expected = norm(textOfInlines(inl));
      let block: Block;
      if (kind === 0) block = { t: 'para', f: {}, inlines: inl };
      else if (kind === 1) block = { t: 'heading', level: 1 + Math.floor(r() * 6), f: {}, inlines: inl };
      else if (kind === 2)
        block = {
          t: 'table',
          bordered: false,
          rows: [{ header: true, cells: [{ blocks: [{ t: 'para', f: {}, inlines: inl }], colspan: 1, rowspan: 1 }] }],
        };
      else if (kind === 3) block = { t: 'list', ordered: r() < 0.5, start: 1, items: [{ blocks: [{ t: 'para', f: {}, inlines: inl }] }] };
      else block = { t: 'quote', blocks: [{ t: 'para', f: {}, inlines: inl }] };
      const md = modelToMarkdown({ blocks: [block], notes: [], warnings: [] }, new Set());
      const html = render(md);
      const got = renderedText(html);
      if (got !== expected) failures.push(`${JSON.stringify(expected)}\n  md:   ${JSON.stringify(md)}\n  text: ${JSON.stringify(got)}`);
      const active = renderedProblems(md);
      if (active.length) failures.push(`active: ${active.join(', ')} in ${JSON.stringify(md)}`);
    }
    expect(failures.slice(0, 12).join('\n'), `${failures.length} failures`).toBe('');
  });

  it('and through commonmark.js (CommonMark only: no tables or strikethrough there)', () => {
    const r = rng(24);
    const render = RENDERERS['commonmark.js']!;
    const failures: string[] = [];
    for (let n = 0; n < 1000; n++) {
      const kind = Math.floor(r() * 4);
      const inl = randomInlines(r, { code: true, strike: false });
      const expected = norm(textOfInlines(inl));
      const para: Block = { t: 'para', f: {}, inlines: inl };
      const block: Block =
        kind === 0
          ? para
          : kind === 1
            ? { t: 'heading', level: 1 + Math.floor(r() * 6), f: {}, inlines: inl }
            : kind === 2
              ? { t: 'list', ordered: r() < 0.5, start: 1, items: [{ blocks: [para] }] }
              : { t: 'quote', blocks: [para] };
      const md = modelToMarkdown({ blocks: [block], notes: [], warnings: [] }, new Set());
      const got = renderedText(render(md));
      if (got !== expected) failures.push(`${JSON.stringify(expected)}\n  md:   ${JSON.stringify(md)}\n  text: ${JSON.stringify(got)}`);
    }
    expect(failures.slice(0, 12).join('\n'), `${failures.length} failures`).toBe('');
  });
});
