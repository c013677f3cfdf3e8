/**
 * Annotate and field discovery on hostile templates and values, all generated here: oversized parts (refused
 * from their declared size, before inflating), many honest parts beyond the request's inflate budget, entry
 * names that smuggle paths, overlapping entries, XML depth/element/attribute/entity bombs, table values of
 * hundreds of thousands of cells, tens of thousands of split placeholders, and too many fields. Each answer
 * is a FolioError naming what was too large; the near-linear cases must also give the right result.
 */
import { randomBytes } from 'node:crypto';
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { annotateDocx, listTemplateFields, type AnnotateField } from '../../src/annotate/index.js';
import { buildZip } from '../support/zip.js';
import { rejection as refusal } from '../support/refusal.js';
import { makeDocx, para, run, textOf, unpack, W_NS } from './helpers.js';

const doc = (body: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document ${W_NS}><w:body>${body}</w:body></w:document>`;

/** A template's parts with `document.xml` replaced (stored, not deflated: the ratio heuristic stays out of the way). */
function withDocument(xml: string, extra: Record<string, Uint8Array | string> = {}): Uint8Array {
  const files = unzipSync(makeDocx({ body: para(run('x')) })) as Zippable;
  files['word/document.xml'] = [strToU8(xml), { level: 0 }];
  for (const [name, data] of Object.entries(extra)) files[name] = typeof data === 'string' ? strToU8(data) : data;
  return zipSync(files);
}

/**
 * Appends raw entries to a template by rewriting its ZIP (with test/support/zip.ts): `declared` overrides the sizes in both headers
 * (a lie the reader must catch without inflating), `aliases` add central records for an entry's bytes.
 */
function withRawEntries(
  template: Uint8Array,
  entries: Array<{ name: string; data: Uint8Array; declared?: number }>,
  aliases: Array<{ name: string; of: string }> = [],
): Uint8Array {
  const parts = Object.entries(unzipSync(template)).map(([name, data]) => ({ name, data }));
  // Level 1, and the same bytes added many times are deflated once (separate entries all the same, no overlap).
  return new Uint8Array(buildZip([...parts, ...entries], { aliases, level: 1 }));
}

const text = (id: string, value: string): AnnotateField => ({ id, type: 'text', value });
/** `{{name}}` split over three runs, as Word leaves it after spell checking. */
const split = (name: string) => run('{{') + run(name) + run('}}');

describe('package size', () => {
  it('a document part declared far beyond the parse limit is refused by name before it is inflated', async () => {
    // 1 MB of random bytes (no bomb ratio) that do not inflate to anything: only the declared size can have refused it.
    const junk = new Uint8Array(randomBytes(1024 * 1024));
    const template = withRawEntries(makeDocx({ body: para(run('x')) }), []);
    const files = unzipSync(template);
    delete files['word/document.xml'];
    const bomb = withRawEntries(zipSync(files), [{ name: 'word/document.xml', data: junk, declared: 120 * 1024 * 1024 }]);
    for (const call of [() => listTemplateFields(bomb), () => annotateDocx(bomb, [text('a', 'v')])]) {
      const e = await refusal(call);
      expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(e.status).toBe(422);
      expect(e.message).toBe('The part word/document.xml is too large to fill: 120 MB of XML, at most 16 MB per part');
    }
  });

  it('another XML part declared at 250 MB is refused by name (at most 64 MB per part read)', async () => {
    const junk = new Uint8Array(randomBytes(2 * 1024 * 1024));
    const bomb = withRawEntries(makeDocx({ body: para(run('{{a}}')) }), [{ name: 'customXml/item1.xml', data: junk, declared: 250 * 1024 * 1024 }]);
    const e = await refusal(annotateDocx(bomb, [text('a', 'v')]));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/^The part "customXml\/item1.xml" is too large: a part annotate reads may expand to at most 64 MB/);
  });

  it('many honest parts stop at the request budget while inflating (each within its own limit)', async () => {
    // 200 parts of 1 MB: each is fine, the declared total (200 MB) within the package bounds; inflating
    // all of them is not. The budget answers at the part that crosses it.
    const one = strToU8(`<r>${'<w:p>lorem ipsum</w:p>'.repeat(47_000)}</r>`.padEnd(1024 * 1024, ' '));
    const parts = Array.from({ length: 200 }, (_, i) => ({ name: `customXml/item${i}.xml`, data: one }));
    const template = withRawEntries(makeDocx({ body: para(run('{{a}}')) }), parts);
    const e = await refusal(annotateDocx(template, [text('a', 'v')]));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/^The package expands to more than 160 MB in total \(at "customXml\/item\d+\.xml"\)/);
  });

  it("entries that share one entry's bytes (overlapping records) are refused", async () => {
    const big = strToU8(`<r>${'x'.repeat(500_000)}</r>`);
    const template = withRawEntries(
      makeDocx({ body: para(run('x')) }),
      [{ name: 'customXml/item1.xml', data: big }],
      Array.from({ length: 50 }, (_, i) => ({ name: `customXml/item1.xml`.replace('1', `x${i}`), of: 'customXml/item1.xml' })),
    );
    const e = await refusal(annotateDocx(template, []));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/disagrees with the central directory|overlapping/);
  });

  it('entry names with path tricks never reach the output: refused naming the entry', async () => {
    for (const name of ['../../x', '/abs.xml', 'word\\back.xml', 'word/../../x.xml']) {
      const template = withRawEntries(makeDocx({ body: para(run('{{a}}')) }), [{ name, data: strToU8('<x/>') }]);
      for (const call of [() => annotateDocx(template, [text('a', 'v')]), () => listTemplateFields(template)]) {
        const e = await refusal(call);
        expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
        expect(e.message).toContain(JSON.stringify(name));
      }
    }
  });

  it('a duplicate entry name is refused', async () => {
    const template = withRawEntries(makeDocx({ body: para(run('x')) }), [{ name: 'word/document.xml', data: strToU8(doc(para(run('other')))) }]);
    expect((await refusal(annotateDocx(template, []))).message).toMatch(/two entries named "word\/document.xml"/);
  });
});

describe('XML', () => {
  it('a depth bomb (100,000 nested elements) is refused', async () => {
    const e = await refusal(() => listTemplateFields(withDocument(doc('<w:p>'.repeat(100_000) + '</w:p>'.repeat(100_000)))));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/word\/document.xml nests elements deeper than 512 levels/);
  });

  it('an element-count bomb is refused before its tree is built', async () => {
    const e = await refusal(() => listTemplateFields(withDocument(doc('<w:p/>'.repeat(1_600_000)))));
    expect(e.message).toBe('The part word/document.xml has more than 1500000 elements');
  });

  it('an element with thousands of attributes is refused', async () => {
    const attrs = Array.from({ length: 5000 }, (_, i) => `a${i}="1"`).join(' ');
    const e = await refusal(() => listTemplateFields(withDocument(doc(`<w:p ${attrs}/>`))));
    expect(e.message).toBe('The part word/document.xml has an element with more than 1000 attributes');
  });

  it('entity declarations (billion laughs) and DOCTYPEs are refused, in the body and in any other part', async () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>';
    const inBody = withDocument(laughs + doc(para(run('&c;'))).replace(/^<\?xml[^>]*>/, ''));
    const inOther = withDocument(doc(para(run('x'))), { 'customXml/item1.xml': `${laughs}<r>&c;</r>` });
    for (const [docx, part] of [
      [inBody, 'word/document.xml'],
      [inOther, 'customXml/item1.xml'],
    ] as const) {
      const e = await refusal(() => listTemplateFields(docx));
      expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(e.message).toBe(`The part ${part} declares a DOCTYPE or entities, which are not allowed`);
    }
  });
});

describe('table values', () => {
  const template = makeDocx({
    body: `<w:sdt><w:sdtPr><w:tag w:val="t"/></w:sdtPr><w:sdtContent><w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="100"/></w:tblGrid><w:tr><w:tc>${para(run('h'))}</w:tc></w:tr></w:tbl></w:sdtContent></w:sdt>${para('')}`,
  });

  it('a 2,000 × 200 value is refused naming the field, before the template is touched', async () => {
    const rows = Array.from({ length: 2000 }, (_, r) => Array.from({ length: 200 }, (_, c) => `r${r}c${c}`));
    const e = await refusal(annotateDocx(template, [{ id: 't', type: 'table', value: rows }]));
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.status).toBe(422);
    expect(e.details).toEqual([{ field: 'fields[0].value', issue: 'a table value may hold at most 100000 cells; this one reaches that at row 500' }]);
  });

  it('values within the limit are written row by row', async () => {
    const rows = Array.from({ length: 200 }, (_, r) => Array.from({ length: 50 }, (_, c) => `r${r}c${c}`));
    const { docx, report } = await annotateDocx(template, [{ id: 't', type: 'table', value: rows }]);
    expect(report.filled).toEqual([{ id: 't', type: 'table', occurrences: 1 }]);
    const document = unpack(docx).document;
    expect(document.split('<w:tr>').length - 1).toBe(201);
    expect(textOf(document)).toContain('r199c49');
  });

  it('the cells of several values count together per request', async () => {
    const rows = Array.from({ length: 1000 }, () => Array.from({ length: 90 }, () => 'x'));
    const fields = ['t', 'u', 'v'].map((id): AnnotateField => ({ id, type: 'table', value: rows }));
    const e = await refusal(annotateDocx(template, fields));
    expect(e.details).toEqual([{ field: 'fields[2].value', issue: 'tables may hold at most 200000 cells per request' }]);
  });
});

describe('placeholders and fields', () => {
  it('thousands of split placeholders, each its own field, are all filled', async () => {
    const n = 4000;
    const docx = makeDocx({ body: Array.from({ length: n }, (_, i) => para(split(`f${i}`))).join('') });
    const { docx: out, report } = await annotateDocx(
      docx,
      Array.from({ length: n }, (_, i) => text(`f${i}`, `v${i}.`)),
    );
    expect(report.filled.length).toBe(n);
    expect(report.unmatched).toEqual([]);
    expect(report.unfilled).toEqual([]);
    const t = textOf(unpack(out).document);
    expect(t).not.toContain('{{');
    expect(t).toContain('v0.\nv1.\n');
    expect(t).toContain(`v${n - 1}.`);
  });

  it('one paragraph of many distinct split placeholders: the runs re-read over all its fields are bounded', async () => {
    const n = 1500;
    const docx = makeDocx({ body: para(Array.from({ length: n }, (_, i) => split(`f${i}`) + run(' ')).join('')) });
    const e = await refusal(
      annotateDocx(
        docx,
        Array.from({ length: n }, (_, i) => text(`f${i}`, 'v')),
      ),
    );
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/^A paragraph of word\/document.xml holds too many placeholders and runs to fill/);
    // A few hundred in one paragraph are fine.
    const ok = makeDocx({ body: para(Array.from({ length: 200 }, (_, i) => split(`f${i}`) + run(' ')).join('')) });
    const { report } = await annotateDocx(
      ok,
      Array.from({ length: 200 }, (_, i) => text(`f${i}`, 'v')),
    );
    expect(report.filled.length).toBe(200);
  });

  it('a template with more fields than the limit is refused by discovery and by annotate', async () => {
    const docx = withDocument(doc(para(run('{{a}}')).repeat(25_001)));
    for (const call of [() => listTemplateFields(docx), () => annotateDocx(docx, [text('a', 'v')])]) {
      const e = await refusal(call);
      expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(e.message).toBe('The template has more than 25000 fields (content controls and placeholders); at most 25000 are supported');
    }
    const controls = withDocument(
      doc(
        Array.from(
          { length: 25_001 },
          (_, i) => `<w:sdt><w:sdtPr><w:tag w:val="c${i}"/></w:sdtPr><w:sdtContent>${para(run('x'))}</w:sdtContent></w:sdt>`,
        ).join(''),
      ),
    );
    expect((await refusal(() => listTemplateFields(controls))).message).toMatch(/more than 25000 fields/);
  });

  it('a request with more than 5,000 fields is refused', async () => {
    const e = await refusal(
      annotateDocx(
        makeDocx({ body: para(run('x')) }),
        Array.from({ length: 5001 }, (_, i) => text(`f${i}`, 'v')),
      ),
    );
    expect(e.code).toBe('VALIDATION_ERROR');
    expect(e.details).toEqual([{ field: 'fields', issue: 'more than 5000 items' }]);
  });

  it('thousands of controls bound into a store of thousands of items are all written (children looked up by index)', async () => {
    const n = 5000;
    const store = '{11111111-2222-3333-4444-555555555555}';
    const body = Array.from(
      { length: n },
      (_, i) =>
        `<w:sdt><w:sdtPr><w:tag w:val="x"/><w:dataBinding w:xpath="/root[1]/item[${i + 1}]" w:storeItemID="${store}"/><w:text/></w:sdtPr><w:sdtContent>${para(run('x'))}</w:sdtContent></w:sdt>`,
    ).join('');
    const docx = withDocument(doc(body), {
      'customXml/item1.xml': `<root>${'<item>old</item>'.repeat(n)}</root>`,
      'customXml/itemProps1.xml': `<?xml version="1.0"?><ds:datastoreItem ds:itemID="${store}" xmlns:ds="http://schemas.openxmlformats.org/officeDocument/2006/customXml"/>`,
    });
    const { docx: out, report } = await annotateDocx(docx, [text('x', 'new')]);
    expect(report.filled).toEqual([{ id: 'x', type: 'text', occurrences: n }]);
    const item = unpack(out).part('customXml/item1.xml');
    expect(item.split('<item>new</item>').length - 1).toBe(n);
    expect(item).not.toContain('old');
  });

  it('a link placeholder repeated thousands of times gets one relationship each, quickly', async () => {
    const docx = makeDocx({ body: para(run('{{l}}')).repeat(3000) });
    const { docx: out, report } = await annotateDocx(docx, [{ id: 'l', type: 'link', value: 'https://example.com/' }]);
    expect(report.filled).toEqual([{ id: 'l', type: 'link', occurrences: 3000 }]);
    const rels = unpack(out).part('word/_rels/document.xml.rels');
    expect(new Set([...rels.matchAll(/Id="([^"]+)"/g)].map((m) => m[1])).size).toBe(rels.split('<Relationship ').length - 1);
  });
});
