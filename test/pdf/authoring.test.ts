/**
 * openForAuthoring builds pdf-lib's document from the bounded reader's objects instead of running pdf-lib's
 * parser (src/pdf/authoring.ts). Its values must be exactly what pdf-lib's own parser makes of the same bytes:
 * names with #xx escapes (a '#' of their own, spaces, delimiters, bytes above 127), integers, reals and strings (as the same bytes).
 * pdf-lib's parser runs here only on a small file written in this test.
 */
import { describe, expect, it } from 'vitest';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFRef, PDFString, type PDFObject } from '@cantoo/pdf-lib';
import { openForAuthoring } from '../../src/pdf/index.js';

/** A classic-xref PDF of the given objects (1: catalog, 2: pages, 3: page, 4: the object under test). */
function pdfWith(body4: string): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Extra 4 0 R >>',
    body4,
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

/**
 * A value as PDF syntax, with dictionary entries in key order (the two builders may order them differently) and
 * strings as their bytes (Folio writes every string as a hex string: the same bytes).
 */
function canonical(context: PDFDocument['context'], v: PDFObject | undefined): string {
  if (v instanceof PDFDict) {
    const entries = v
      .entries()
      .map(([k, x]) => `${k.toString()} ${canonical(context, x)}`)
      .sort();
    return `<<${entries.join(' ')}>>`;
  }
  if (v instanceof PDFArray)
    return `[${v
      .asArray()
      .map((x) => canonical(context, x))
      .join(' ')}]`;
  if (v instanceof PDFString || v instanceof PDFHexString) return `bytes:${Buffer.from(v.asBytes()).toString('hex')}`;
  return v === undefined ? 'undefined' : v.toString();
}

describe('openForAuthoring', () => {
  it('makes the values pdf-lib parsing the same bytes makes', async () => {
    const body =
      '<< /Plain /Name /With#23Hash /V#23 /Space#20In /V#20 /Delims#28#29#2F /V#2F /High#E9#FF /V#E9 /Lower#e9 /V#c3#a9 ' +
      '/Ints [0 -0 7 -42 2147483648 9007199254740993] /Reals [0.5 -.25 3. 1.0000000001 123456.789] ' +
      '/Str (a\\(b\\)c) /Hex <00ff10> /Bool true /Nil null /Ref 3 0 R /Arr [/A [/B#20C] << /K /V >>] >>';
    const bytes = pdfWith(body);
    const ours = (await openForAuthoring(bytes, { maxObjects: 100, purpose: 'testing' })).doc;
    const theirs = await PDFDocument.load(bytes, { updateMetadata: false });
    const ref = PDFRef.of(4, 0);
    expect(canonical(ours.context, ours.context.lookup(ref))).toBe(canonical(theirs.context, theirs.context.lookup(ref)));
    // And the names are pdf-lib's interned instances, so lookups by PDFName.of work on them.
    const dict = ours.context.lookup(ref, PDFDict);
    expect(dict.keys().map((k) => k.toString())).toContain('/With#23Hash');
  });

  it("keeps a name whose bytes spell an escape (pdf-lib's parser decodes /Lit#2341 twice, to /LitA)", async () => {
    const bytes = pdfWith('<< /Lit#2341 /V#2341 >>');
    const ours = (await openForAuthoring(bytes, { maxObjects: 100, purpose: 'testing' })).doc;
    expect(canonical(ours.context, ours.context.lookup(PDFRef.of(4, 0)))).toBe('<</Lit#2341 /V#2341>>');
  });
});
