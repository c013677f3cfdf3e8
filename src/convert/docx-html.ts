/**
 * Document model (src/docx/read) → one self-contained HTML5 file: semantic elements (h1–h6, p, ul/ol with
 * start, task items as disabled checkboxes, table with thead for header rows, blockquote, pre/code, a, img
 * with data URIs, sup note references and a footnotes section, equations as presentation MathML) and inline CSS for what Word formatted
 * (alignment, indentation, colour, font size, highlight, underline, table borders and shading).
 *
 * Everything from the document is escaped; link targets reach the model only with a safe scheme (the reader
 * drops javascript: and the like), images only as data URIs of image types, and no script, event handler
 * or style sheet from the document is ever written.
 */
import { OutputBudget } from '../budget/index.js';
import { equationMathml } from '../docx/math/mathml.js';
import { mathText } from '../docx/math/ast.js';
import type { Block, DocModel, Inline, Marks, ParaFormat } from '../docx/read/model.js';
import { DocxImages } from './docx-images.js';
import { ByteSink, type TextSink } from './output-sink.js';

export interface HtmlContext {
  warnings: Set<string>;
  /** `kind:id` → note number. */
  notes: Map<string, number>;
  idPrefix: string;
  /** Data URIs, each picture encoded once; every <img> written counts its data against the output budget. */
  images: DocxImages;
}

export function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Word's highlight colour names → CSS. */
const HIGHLIGHT: Record<string, string> = {
  yellow: '#ffff00',
  green: '#00ff00',
  cyan: '#00ffff',
  magenta: '#ff00ff',
  blue: '#0000ff',
  red: '#ff0000',
  darkBlue: '#000080',
  darkCyan: '#008080',
  darkGreen: '#008000',
  darkMagenta: '#800080',
  darkRed: '#800000',
  darkYellow: '#808000',
  darkGray: '#808080',
  lightGray: '#c0c0c0',
  black: '#000000',
  white: '#ffffff',
};

const pt = (twips: number) => `${Math.round(twips / 2) / 10}pt`;

function paraStyle(f: ParaFormat): string {
  const css: string[] = [];
  if (f.align && f.align !== 'left') css.push(`text-align:${f.align}`);
  if (f.indLeft) css.push(`margin-left:${pt(f.indLeft)}`);
  if (f.indRight) css.push(`margin-right:${pt(f.indRight)}`);
  if (f.firstLine) css.push(`text-indent:${pt(f.firstLine)}`);
  if (f.shading) css.push(`background-color:#${f.shading}`);
  return css.length ? ` style="${css.join(';')}"` : '';
}

function runHtml(text: string, m: Marks, pre = false): string {
  let s = pre ? htmlEscape(text) : htmlEscape(text).replace(/\t/g, '&emsp;');
  if (m.code) s = `<code>${s}</code>`;
  if (m.sup) s = `<sup>${s}</sup>`;
  if (m.sub) s = `<sub>${s}</sub>`;
  if (m.u) s = `<u>${s}</u>`;
  if (m.s) s = `<s>${s}</s>`;
  if (m.i) s = `<em>${s}</em>`;
  if (m.b) s = `<strong>${s}</strong>`;
  const css: string[] = [];
  if (m.color) css.push(`color:#${m.color}`);
  if (m.size) css.push(`font-size:${m.size}pt`);
  if (m.highlight && HIGHLIGHT[m.highlight]) css.push(`background-color:${HIGHLIGHT[m.highlight]}`);
  return css.length ? `<span style="${css.join(';')}">${s}</span>` : s;
}

export function htmlInlines(ctx: HtmlContext, list: Inline[]): string {
  let out = '';
  for (const i of list) {
    switch (i.t) {
      case 'text':
        out += runHtml(i.text, i.m);
        break;
      case 'br':
        out += '<br>';
        break;
      case 'link':
        out += `<a href="${htmlEscape(i.href)}"${i.title ? ` title="${htmlEscape(i.title)}"` : ''}>${htmlInlines(ctx, i.children)}</a>`;
        break;
      case 'image': {
        if (!i.data) {
          out += htmlEscape(i.alt);
          break;
        }
        const size = (i.widthPx ? ` width="${i.widthPx}"` : '') + (i.heightPx ? ` height="${i.heightPx}"` : '');
        // Each repeat of a picture writes its data again (an <img> cannot point at another's): see docx-images.ts.
        out += `<img src="${ctx.images.inline(i.data)}" alt="${htmlEscape(i.alt)}"${i.title ? ` title="${htmlEscape(i.title)}"` : ''}${size}>`;
        break;
      }
      case 'note': {
        const n = ctx.notes.get(`${i.kind}:${i.id}`);
        if (n !== undefined) out += `<sup class="footnote-ref"><a href="#${ctx.idPrefix}fn${n}" id="${ctx.idPrefix}fnref${n}">${n}</a></sup>`;
        break;
      }
      case 'check':
        out += `<input type="checkbox" disabled${i.checked ? ' checked' : ''}>`;
        break;
      case 'math':
        out += equationMathml(i);
        break;
      case 'anchor':
        out += `<a id="${htmlEscape(i.name)}"></a>`;
        break;
    }
  }
  return out;
}

/** A code block's lines with their emphasis kept (no <code> per run: the block is code), breaks as new lines. */
export function codeInlines(ctx: HtmlContext, list: Inline[]): string {
  let out = '';
  for (const i of list) {
    if (i.t === 'text') out += runHtml(i.text, { ...i.m, code: undefined }, true);
    else if (i.t === 'br') out += '\n';
    else if (i.t === 'link') out += `<a href="${htmlEscape(i.href)}">${codeInlines(ctx, i.children)}</a>`;
    else if (i.t === 'check') out += i.checked ? '☒' : '☐';
    else if (i.t === 'math') out += htmlEscape(mathText(i.row));
  }
  return out;
}

const BORDER = 'border:1px solid #000';

export function htmlBlocks(ctx: HtmlContext, list: Block[]): string {
  const out: string[] = [];
  for (const b of list) {
    switch (b.t) {
      case 'para': {
        const content = htmlInlines(ctx, b.inlines);
        if (content) out.push(`<p${paraStyle(b.f)}>${content}</p>`);
        break;
      }
      case 'heading':
        out.push(`<h${b.level}${paraStyle(b.f)}>${htmlInlines(ctx, b.inlines)}</h${b.level}>`);
        break;
      case 'code':
        out.push(`<pre><code${b.lang ? ` class="language-${htmlEscape(b.lang)}"` : ''}>${codeInlines(ctx, b.inlines)}</code></pre>`);
        break;
      case 'hr':
        out.push('<hr>');
        break;
      case 'quote':
        out.push(`<blockquote>\n${htmlBlocks(ctx, b.blocks)}\n</blockquote>`);
        break;
      case 'list': {
        const tag = b.ordered ? 'ol' : 'ul';
        const start = b.ordered && b.start !== 1 ? ` start="${b.start}"` : '';
        const items = b.items.map((it) => {
          const box = it.checked === undefined ? '' : `<input type="checkbox" disabled${it.checked ? ' checked' : ''}> `;
          // A single paragraph item is written without <p>, as a tight list.
          const only = it.blocks.length === 1 && it.blocks[0]!.t === 'para' ? it.blocks[0] : undefined;
          const body = only && only.t === 'para' ? htmlInlines(ctx, only.inlines) : htmlBlocks(ctx, it.blocks);
          return `<li${box ? ' class="task-list-item"' : ''}>${box}${body}</li>`;
        });
        out.push(`<${tag}${start}>\n${items.join('\n')}\n</${tag}>`);
        break;
      }
      case 'table': {
        const head = b.rows.filter((r) => r.header);
        const body = b.rows.filter((r) => !r.header);
        const cellStyle = (shading?: string) => {
          const css = [b.bordered ? BORDER : '', shading ? `background-color:#${shading}` : ''].filter(Boolean);
          return css.length ? ` style="${css.join(';')}"` : '';
        };
        const row = (r: (typeof b.rows)[number], tag: 'th' | 'td') =>
          '<tr>' +
          r.cells
            .map((c) => {
              const span = (c.colspan > 1 ? ` colspan="${c.colspan}"` : '') + (c.rowspan > 1 ? ` rowspan="${c.rowspan}"` : '');
              const only = c.blocks.length === 1 && c.blocks[0]!.t === 'para' ? c.blocks[0] : undefined;
              const content = only && only.t === 'para' ? htmlInlines(ctx, only.inlines) : htmlBlocks(ctx, c.blocks);
              const align = only && only.t === 'para' && only.f.align && only.f.align !== 'left' ? `text-align:${only.f.align}` : '';
              let style = cellStyle(c.shading);
              if (align) style = style ? style.slice(0, -1) + ';' + align + '"' : ` style="${align}"`;
              return `<${tag}${span}${style}>${content}</${tag}>`;
            })
            .join('') +
          '</tr>';
        const parts = [`<table${b.bordered ? ` style="border-collapse:collapse;${BORDER}"` : ''}>`];
        if (head.length) parts.push('<thead>', ...head.map((r) => row(r, 'th')), '</thead>');
        if (body.length) parts.push('<tbody>', ...body.map((r) => row(r, 'td')), '</tbody>');
        parts.push('</table>');
        out.push(parts.join('\n'));
        break;
      }
      case 'source': {
        // What Word shows for it (the Markdown source may hold raw HTML, which a DOCX's HTML never passes on).
        const inner = htmlBlocks(ctx, b.blocks);
        if (inner) out.push(inner);
        break;
      }
    }
  }
  return out.join('\n');
}

const BASE_CSS =
  'body{font-family:Calibri,Carlito,"Segoe UI",Arial,sans-serif;line-height:1.4;max-width:50em;margin:2em auto;padding:0 1em}' +
  'table{border-collapse:collapse}td,th{padding:.2em .5em;vertical-align:top}pre{background:#f5f5f5;padding:.5em;overflow:auto}' +
  'blockquote{margin-left:2em;color:#404040}img{max-width:100%;height:auto}.task-list-item{list-style:none}';

/**
 * Writes the model as one HTML5 document into `sink`, one top-level block (and one note) at a time, so the
 * output budget sees it while it is written (output-sink.ts).
 */
export function writeHtml(doc: DocModel, warnings: Set<string>, sink: TextSink): void {
  const notes = new Map<string, number>();
  doc.notes.forEach((n, i) => notes.set(`${n.kind}:${n.id}`, i + 1));
  const ctx: HtmlContext = { warnings, notes, idPrefix: '', images: new DocxImages(sink) };
  sink.write(
    '<!doctype html>\n<html>\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
      `<title>${htmlEscape(doc.title ?? 'Document')}</title>\n<style>${BASE_CSS}</style>\n</head>\n<body>\n`,
  );
  // The blocks joined by new lines, as htmlBlocks joins them (a block that writes nothing adds no line).
  let first = true;
  for (const b of doc.blocks) {
    const s = htmlBlocks(ctx, [b]);
    if (!s) continue;
    sink.write(first ? s : '\n' + s);
    first = false;
  }
  if (doc.notes.length) {
    sink.write('\n<section class="footnotes">\n<hr>\n<ol>');
    doc.notes.forEach((n, i) =>
      sink.write(`\n<li id="fn${i + 1}">${htmlBlocks(ctx, n.blocks)} <a href="#fnref${i + 1}" class="footnote-back">↩</a></li>`),
    );
    sink.write('\n</ol>\n</section>');
  }
  sink.write('\n</body>\n</html>\n');
}

/** The model as one HTML5 string, without an output budget (tests and scripts; the API writes bytes). */
export function modelToHtml(doc: DocModel, warnings: Set<string>): string {
  const sink = new ByteSink(new OutputBudget(Infinity, 'HTML'));
  writeHtml(doc, warnings, sink);
  return Buffer.from(sink.finish()).toString('utf8');
}
