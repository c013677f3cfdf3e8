/**
 * The 20 HTML files of the corpus (test/fixtures/corpus/html): each converts, and its tables (rows, cells, spans), list nesting,
 * headings and images are all in the DOCX. Expected figures come from the source DOM, not from the converter.
 * A sample goes through a real LibreOffice round trip (DOCX → PDF) that must succeed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'htmlparser2';
import type { AnyNode, Element } from 'domhandler';
import { htmlToDocx } from '../../src/convert/index.js';
import { decodeText } from '../../src/convert/text.js';
import { CORPUS_HTML as DIR } from '../helpers/corpus.js';
import { count, unpack } from './helpers.js';

const files = fs
  .readdirSync(DIR)
  .filter((f) => /\.x?html?$/.test(f))
  .sort();
const SKIPPED = new Set(['script', 'style', 'head', 'template', 'noscript', 'svg', 'math']);

interface Expected {
  tables: number;
  rows: number;
  colspans: number;
  rowspans: number;
  headings: number;
  listDepth: number;
  images: number;
}

function expectedOf(html: string): Expected {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true });
  const e: Expected = { tables: 0, rows: 0, colspans: 0, rowspans: 0, headings: 0, listDepth: 0, images: 0 };
  const stack: Array<[AnyNode, number]> = doc.children.map((c) => [c, 0]);
  while (stack.length) {
    const [n, depth] = stack.pop()!;
    if (n.type !== 'tag') continue;
    const el = n as Element;
    if (SKIPPED.has(el.name) || /display:\s*none/.test(el.attribs.style ?? '')) continue;
    let d = depth;
    if (el.name === 'table') {
      // Word has no empty tables; a rowspan reaching past the last row spans nothing.
      const rows = tableRows(el);
      if (rows.length) e.tables++;
      e.rows += rows.length;
      rows.forEach((tr, i) => {
        for (const c of tr.children) {
          if (c.type !== 'tag' || !['td', 'th'].includes((c as Element).name)) continue;
          const a = (c as Element).attribs;
          if (Number(a.colspan ?? 1) > 1) e.colspans++;
          if (Number(a.rowspan ?? 1) > 1 && i < rows.length - 1) e.rowspans++;
        }
      });
    }
    if (el.name === 'td' || el.name === 'th') d = 0; // a list inside a table cell starts at level 1 again
    if (/^h[1-6]$/.test(el.name)) e.headings++;
    if (el.name === 'ul' || el.name === 'ol') e.listDepth = Math.max(e.listDepth, (d = depth + 1));
    if (el.name === 'img' && /^data:image\/(png|jpe?g|gif|bmp);base64,/i.test(el.attribs.src ?? '')) e.images++;
    for (const c of el.children) stack.push([c, d]);
  }
  return e;
}

function tableRows(table: Element): Element[] {
  const rows: Element[] = [];
  for (const c of table.children) {
    if (c.type !== 'tag') continue;
    const el = c as Element;
    if (el.name === 'tr') rows.push(el);
    else if (['thead', 'tbody', 'tfoot'].includes(el.name))
      for (const r of el.children) if (r.type === 'tag' && (r as Element).name === 'tr') rows.push(r as Element);
  }
  return rows;
}

describe('HTML corpus', () => {
  it('has the 20 files', () => expect(files).toHaveLength(20));

  for (const file of files) {
    it(`${file}: tables, spans, lists, headings and images survive`, () => {
      const html = decodeText(fs.readFileSync(path.join(DIR, file)));
      const want = expectedOf(html);
      const d = unpack(htmlToDocx(html));
      const doc = d.document;
      expect(count(doc, '<w:tbl>')).toBe(want.tables);
      expect(count(doc, '<w:tr>')).toBe(want.rows);
      expect(count(doc, /<w:gridSpan w:val="\d+"\/>/)).toBeGreaterThanOrEqual(want.colspans);
      expect(count(doc, '<w:vMerge w:val="restart"/>')).toBe(want.rowspans);
      expect(count(doc, /<w:pStyle w:val="(Heading[1-6]|Title)"\/>/)).toBe(want.headings);
      const levels = [...doc.matchAll(/<w:ilvl w:val="(\d)"\/>/g)].map((m) => Number(m[1]));
      expect(levels.length ? Math.max(...levels) + 1 : 0).toBe(Math.min(9, want.listDepth));
      expect(count(doc, '<w:drawing>')).toBe(want.images);
      // Every table row is rectangular on the grid.
      for (const tbl of doc.match(/<w:tbl>(?:(?!<w:tbl>).)*?<\/w:tbl>/g) ?? []) {
        const cols = count(tbl.slice(0, tbl.indexOf('</w:tblGrid>')), '<w:gridCol ');
        for (const tr of tbl.match(/<w:tr>.*?<\/w:tr>/g) ?? []) {
          if (tr.includes('<w:tbl>')) continue;
          const cells = [...tr.matchAll(/<w:tc>(?:<w:tcPr>(.*?)<\/w:tcPr>)?/g)].map((m) =>
            Number(/<w:gridSpan w:val="(\d+)"/.exec(m[1] ?? '')?.[1] ?? 1),
          );
          expect(cells.reduce((s, n) => s + n, 0)).toBe(cols);
        }
      }
    });
  }

  it('LibreOffice opens a sample of the converted files without error', () => {
    const sample = files.filter((_, i) => i % 4 === 0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-convert-lo-'));
    try {
      const inputs = sample.map((f) => {
        const p = path.join(dir, f.replace(/\.\w+$/, '.docx'));
        fs.writeFileSync(p, htmlToDocx(decodeText(fs.readFileSync(path.join(DIR, f)))));
        return p;
      });
      execFileSync('soffice', [`-env:UserInstallation=file://${dir}/profile`, '--headless', '--convert-to', 'pdf', '--outdir', dir, ...inputs], {
        timeout: 240_000,
        stdio: 'pipe',
      });
      for (const p of inputs) {
        const pdf = fs.readFileSync(p.replace(/\.docx$/, '.pdf'));
        expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
        expect(pdf.length).toBeGreaterThan(1000);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
