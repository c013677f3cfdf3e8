/**
 * DOCX → Markdown/HTML output is budgeted while it is written and cannot be amplified (issue 23), at the
 * engine level (docxToText, as the engine thread runs it): a picture shown a thousand times has its data once
 * in Markdown (reference images, checked by rendering with markdown-it and commonmark.js); HTML, where every
 * <img> must carry the data, is refused with the 422 naming OUTPUT_MAX_MB once the repeats pass the limit —
 * also when all the repeats are in one paragraph and the whole would pass V8's longest string; one source
 * island named by many content controls is written once; documents of the corpus convert as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as commonmark from 'commonmark';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown, docxToText } from '../../src/convert/index.js';
import { modelToMarkdown } from '../../src/convert/docx-markdown.js';
import { DocxImages, MarkdownImages } from '../../src/convert/docx-images.js';
import { ByteSink } from '../../src/convert/output-sink.js';
import { OutputBudget } from '../../src/budget/index.js';
import type { DocModel, Inline } from '../../src/docx/read/model.js';
import { isFolioError, type FolioError } from '../../src/errors.js';
import { ISLAND_SHOWN, repeatedIslandDocx, repeatedPictureDocx } from '../amplification/docx-amplifiers.js';
import { CORPUS_DOCX as CORPUS } from '../helpers/corpus.js';

const MB = 1024 * 1024;

function refusal(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    if (isFolioError(e)) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;
/** The src of every <img> a renderer makes of the Markdown. */
const srcs = (html: string) => [...html.matchAll(/<img src="([^"]*)"/g)].map((m) => m[1]!);

describe('a picture shown many times', () => {
  const docx = repeatedPictureDocx({ imageBytes: 50_000, references: 1_000 });

  it('is written once in Markdown: reference images that every renderer resolves to its data', () => {
    const { markdown } = docxToMarkdown(docx);
    const data = /\[folio-image-1\]: (data:image\/png;base64,\S+)/.exec(markdown)?.[1];
    expect(data).toBeDefined();
    expect(data!.length).toBeGreaterThan(50_000 * (4 / 3) - 4);
    // Its base64 once (a chunk of it, past the shared PNG signature), one reference per place.
    expect(count(markdown, data!.slice(40, 140))).toBe(1);
    expect(count(markdown, '![logo][folio-image-1]')).toBe(1_000);
    expect(markdown.length).toBeLessThan(data!.length + 1_000 * 40);
    for (const rendered of [new MarkdownIt().render(markdown), new commonmark.HtmlRenderer().render(new commonmark.Parser().parse(markdown))]) {
      const images = srcs(rendered);
      expect(images).toHaveLength(1_000);
      expect(new Set(images)).toEqual(new Set([data]));
    }
  });

  it('fits a small output budget in Markdown, where HTML (the data at every <img>) is refused naming the limit', () => {
    const md = docxToText(docx, 'md', { outputMaxBytes: 1 * MB });
    expect(md.bytes.length).toBeLessThan(1 * MB);
    const e = refusal(() => docxToText(docx, 'html', { outputMaxBytes: 1 * MB }));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/HTML would be larger than the 1 MB one request may produce \(OUTPUT_MAX_MB\)/);
    // Within a budget that holds every copy, HTML shows the picture at each place, from one encoding.
    const html = docxToHtml(docx, { outputMaxBytes: 100 * MB }).html;
    expect(count(html, '<img src="data:image/png;base64,')).toBe(1_000);
  });

  it('is refused at the limit while written: 2,000 copies of a 1 MB picture in one paragraph (2.7 GB of HTML) never build', () => {
    const big = repeatedPictureDocx({ imageBytes: 1_000_000, references: 2_000, oneParagraph: true });
    const heapBefore = process.memoryUsage().heapUsed;
    const e = refusal(() => docxToText(big, 'html', { outputMaxBytes: 5 * MB }));
    expect(e.message).toMatch(/5 MB .*OUTPUT_MAX_MB/);
    // Not a RangeError (V8's longest string is 512 MB) and not an out-of-memory: stopped a few copies in.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * MB);
  });

  it('with a budget above V8’s longest string, one paragraph of 600 MB of copies is a 422, not a RangeError', () => {
    const big = repeatedPictureDocx({ imageBytes: 1_000_000, references: 450, oneParagraph: true });
    const e = refusal(() => docxToText(big, 'html', { outputMaxBytes: 4096 * MB }));
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/One paragraph or table of the document would make more than 256 MB of HTML/);
  });

  it('counts every copy written as HTML inside Markdown (a picture of a kind Markdown does not show as an image)', () => {
    // A BMP: written as <img> in Markdown too, once per place.
    const renamed = repeatedPictureDocx({ imageBytes: 20_000, references: 200, ext: 'bmp' });
    const ok = docxToMarkdown(renamed, { outputMaxBytes: 100 * MB }).markdown;
    expect(count(ok, '<img src="data:image/bmp;base64,')).toBe(200);
    const e = refusal(() => docxToMarkdown(renamed, { outputMaxBytes: 1 * MB }));
    expect(e.message).toMatch(/Markdown would be larger than the 1 MB/);
  });

  it('resolves its reference images to the picture even when a kept Markdown block defines the same label', () => {
    const img: Inline = { t: 'image', alt: 'dot', data: { mime: 'image/png', bytes: new Uint8Array([1, 2, 3]) } };
    // A source island defining the label the writer would use first (labels match ignoring case and edge spaces).
    const source = 'See [this][Folio-Image-1].\n\n[ FOLIO-IMAGE-1 ]: https://example.com/other.png';
    const doc: DocModel = {
      blocks: [
        { t: 'source', markdown: source, blocks: [] },
        { t: 'para', inlines: [img, img], f: {} },
      ],
      notes: [],
      warnings: [],
    };
    const md = modelToMarkdown(doc, new Set());
    // Whichever way the writer avoids it (another prefix, or the island left out as unsafe), both pictures
    // render as the picture.
    expect(srcs(new MarkdownIt().render(md))).toEqual(['data:image/png;base64,AQID', 'data:image/png;base64,AQID']);
    // The writer's own labels avoid any the kept Markdown could define.
    const data = (img as Extract<Inline, { t: 'image' }>).data!;
    const labels = new MarkdownImages(new DocxImages(new ByteSink(new OutputBudget(MB))), new Map([[data, 2]]), [source]);
    expect(labels.target(data, '')).toBe('[folio-image2-1]');
    expect(labels.definitions(new Set())).toEqual(['[folio-image2-1]: data:image/png;base64,AQID']);
  });

  it('hands the answer over as bytes that own their buffer (transferable without a copy)', () => {
    const { bytes } = docxToText(docx, 'md');
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
    expect(Buffer.from(bytes).toString('utf8')).toBe(docxToMarkdown(docx).markdown);
  });
});

describe('a source island named by many content controls', () => {
  const docx = repeatedIslandDocx({ sourceChars: 100_000, controls: 300 });

  it('is written once; the other controls are read as their content, with a warning', () => {
    const { markdown, warnings } = docxToMarkdown(docx);
    expect(count(markdown, 'Kept Markdown of one block, repeated.')).toBe(Math.ceil(100_000 / 38) - 1);
    expect(markdown.length).toBeLessThan(100_000 + 300 * 20);
    expect(count(markdown, ISLAND_SHOWN)).toBe(299);
    expect(warnings.join(' ')).toMatch(/named by more than one content control; it is written once/);
  });

  it('the 5 KB probe stays small (it made 419 MB of Markdown before)', () => {
    const probe = repeatedIslandDocx({ sourceChars: 1_040_000, controls: 400 });
    expect(probe.length).toBeLessThan(8 * 1024);
    expect(docxToText(probe, 'md').bytes.length).toBeLessThan(1_040_000 + 400 * 20);
  });
});

describe('documents of the corpus', () => {
  const files = fs.readdirSync(CORPUS).filter((f) => f.endsWith('.docx'));

  it('a normal document converts as before: its picture inline, the same bytes under the default budget as without one', () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS, 'pandoc--image.docx')));
    const md = docxToText(bytes, 'md');
    expect(Buffer.from(md.bytes).toString('utf8')).toBe(docxToMarkdown(bytes, { outputMaxBytes: Infinity }).markdown);
    expect(Buffer.from(md.bytes).toString('utf8')).toMatch(/!\[He realizes he's making the file-size too big\.\]\(data:image\/jpeg;base64,\/9j\//);
    expect(Buffer.from(docxToText(bytes, 'html').bytes).toString('utf8')).toBe(docxToHtml(bytes, { outputMaxBytes: Infinity }).html);
  });

  it('Markdown shows the same pictures as HTML, each picture’s data once', { timeout: 300_000 }, () => {
    let withPictures = 0;
    for (const f of files) {
      const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS, f)));
      let md: string, html: string;
      try {
        md = docxToMarkdown(bytes).markdown;
        html = docxToHtml(bytes).html;
      } catch (e) {
        if (isFolioError(e)) continue; // refused documents are the corpus tests' business
        throw e;
      }
      const htmlImages = srcs(html).filter((s) => /^data:image\/(png|jpeg|gif|webp);/.test(s));
      if (htmlImages.length === 0) continue;
      withPictures++;
      // Markdown's own images (not those inside HTML tables) rendered: each is one of HTML's pictures.
      const rendered = srcs(new MarkdownIt({ html: false }).render(md)).filter((s) => s.startsWith('data:'));
      for (const s of rendered) expect(htmlImages, f).toContain(s);
      // A picture shown several times by Markdown images has its data once in the Markdown.
      const repeated = [...new Set(rendered)].filter((s) => rendered.filter((r) => r === s).length > 1);
      for (const s of repeated) expect(count(md, s), f).toBe(1);
    }
    expect(withPictures).toBeGreaterThan(5);
  });
});
