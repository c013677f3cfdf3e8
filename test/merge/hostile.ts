/**
 * Hostile merge inputs built byte by byte, to the exact construction each case names (pdf-lib would
 * normalise the page tree on save, so it cannot make them): pages inheriting a large resource from the page
 * tree, a page tree that claims a million pages through shared intermediate nodes, a /Kids array that lists
 * one page object many times. Objects can go into one compressed object stream (with a cross-reference
 * stream), as real producers write them: that is where a small file hides a large dictionary.
 */
import zlib from 'node:zlib';
import { DOC_CLOSE, DOC_OPEN, docxShell } from '../adversarial/generators.js';
import { buildZip, entry } from '../adversarial/zip.js';

/** One indirect object: its body in PDF syntax, and the raw bytes when it is a stream. */
export interface RawObject {
  num: number;
  body: string;
  stream?: Uint8Array;
}

/** Objects per object stream (the shared reader takes up to 100,000 per stream). */
const PER_OBJECT_STREAM = 50_000;

/**
 * A PDF of `objects` (catalog = `root`). Objects listed in `packed` (non-streams) go into Flate object
 * streams and the file gets a cross-reference stream; otherwise a classic xref table.
 */
export function buildPdf(objects: RawObject[], root: number, packed: number[] = []): Uint8Array {
  const parts: Buffer[] = [];
  let length = 0;
  const push = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(buf);
    length += buf.length;
  };
  push('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  const byNum = new Map(objects.map((o) => [o.num, o]));
  const inStream = new Set(packed);
  const offsets = new Map<number, number>();
  const write = (o: RawObject) => {
    offsets.set(o.num, length);
    if (o.stream) {
      push(`${o.num} 0 obj\n${o.body.replace(/>>\s*$/, '')} /Length ${o.stream.length} >>\nstream\n`);
      push(Buffer.from(o.stream));
      push('\nendstream\nendobj\n');
    } else push(`${o.num} 0 obj\n${o.body}\nendobj\n`);
  };
  for (const o of objects) if (!inStream.has(o.num)) write(o);
  let maxNum = 0;
  for (const o of objects) maxNum = Math.max(maxNum, o.num);
  if (packed.length === 0) {
    const xrefAt = length;
    const rows = ['xref', `0 ${maxNum + 1}`, '0000000000 65535 f '];
    for (let n = 1; n <= maxNum; n++) {
      const at = offsets.get(n);
      rows.push(at === undefined ? '0000000000 65535 f ' : `${String(at).padStart(10, '0')} 00000 n `);
    }
    push(`${rows.join('\n')}\ntrailer\n<< /Size ${maxNum + 1} /Root ${root} 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`);
    return new Uint8Array(Buffer.concat(parts));
  }
  // Object streams of "num offset" pairs, then the bodies; `slots` says where each packed object went.
  const slots = new Map<number, { stream: number; index: number }>();
  for (let start = 0; start < packed.length; start += PER_OBJECT_STREAM) {
    const group = packed.slice(start, start + PER_OBJECT_STREAM);
    const stmNum = ++maxNum;
    const index: string[] = [];
    const bodies: string[] = [];
    let at = 0;
    group.forEach((num, i) => {
      const body = byNum.get(num)!.body + '\n';
      index.push(`${num} ${at}`);
      bodies.push(body);
      at += Buffer.byteLength(body, 'latin1');
      slots.set(num, { stream: stmNum, index: i });
    });
    const head = index.join(' ') + '\n';
    const data = zlib.deflateSync(Buffer.from(head + bodies.join(''), 'latin1'));
    write({ num: stmNum, body: `<< /Type /ObjStm /N ${group.length} /First ${Buffer.byteLength(head)} /Filter /FlateDecode >>`, stream: data });
  }
  const xrefNum = ++maxNum;
  const xrefAt = length;
  // /W [1 4 2]: type, offset or object-stream number, generation or index in the stream.
  const rows = Buffer.alloc((xrefNum + 1) * 7);
  for (let n = 0; n <= xrefNum; n++) {
    const row = rows.subarray(n * 7, n * 7 + 7);
    const slot = slots.get(n);
    if (n === xrefNum) {
      row[0] = 1;
      row.writeUInt32BE(xrefAt, 1);
    } else if (slot) {
      row[0] = 2;
      row.writeUInt32BE(slot.stream, 1);
      row.writeUInt16BE(slot.index, 5);
    } else if (offsets.has(n)) {
      row[0] = 1;
      row.writeUInt32BE(offsets.get(n)!, 1);
    } else row.writeUInt16BE(n === 0 ? 65535 : 0, 5);
  }
  const xref = zlib.deflateSync(rows);
  push(`${xrefNum} 0 obj\n<< /Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root ${root} 0 R /Filter /FlateDecode /Length ${xref.length} >>\nstream\n`);
  push(xref);
  push(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`);
  return new Uint8Array(Buffer.concat(parts));
}

const CONTENT = (text: string) => Buffer.from(`BT /F1 12 Tf 40 150 Td (${text}) Tj ET`, 'latin1');

/**
 * `pages` pages whose /Resources is not their own: the page tree's root holds it as a direct dictionary and
 * every page inherits it. The resource is large: a font (named F1, the pages draw with it) whose direct
 * /Widths array holds `widths` numbers, and an image XObject of `imageBytes` bytes. With `packed`, the page
 * tree root (and so the dictionary) sits in a compressed object stream, which hides its size in the file.
 */
export function inheritedResourcePdf(opts: { pages: number; widths: number; imageBytes?: number; packed?: boolean }): Uint8Array {
  const widths = Array.from({ length: opts.widths }, (_, i) => 500 + (i % 7)).join(' ');
  const image = new Uint8Array(opts.imageBytes ?? 0).fill(0x7f);
  const pageNums = Array.from({ length: opts.pages }, (_, i) => 10 + i * 2);
  const objects: RawObject[] = [
    { num: 1, body: '<< /Type /Catalog /Pages 2 0 R >>' },
    {
      num: 2,
      body:
        `<< /Type /Pages /Count ${opts.pages} /Kids [${pageNums.map((n) => `${n} 0 R`).join(' ')}] /MediaBox [0 0 200 200] ` +
        `/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar ${opts.widths - 1} ` +
        `/Widths [${widths}] >> >>${image.length > 0 ? ' /XObject << /Im0 3 0 R >>' : ''} >> >>`,
    },
  ];
  if (image.length > 0) {
    objects.push({
      num: 3,
      body: `<< /Type /XObject /Subtype /Image /Width ${image.length} /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 >>`,
      stream: image,
    });
  }
  pageNums.forEach((n, i) => {
    objects.push({ num: n, body: `<< /Type /Page /Parent 2 0 R /Contents ${n + 1} 0 R >>` });
    objects.push({ num: n + 1, body: '<< >>', stream: CONTENT(`Inherited ${i + 1}`) });
  });
  return buildPdf(objects, 1, opts.packed ? [2] : []);
}

/**
 * A page tree claiming `fanout ** depth` pages in a few objects: each level's node lists the node below it
 * `fanout` times (shared intermediate nodes), down to one page. 10 ** 6 = a million pages in 1.5 KB; the
 * /Count of every node is true to what a reader walking /Kids finds.
 */
export function millionPagePdf(fanout = 10, depth = 6): Uint8Array {
  const objects: RawObject[] = [
    { num: 1, body: '<< /Type /Catalog /Pages 10 0 R >>' },
    { num: 2, body: `<< /Type /Page /Parent ${10 + depth - 1} 0 R /MediaBox [0 0 200 200] /Contents 3 0 R >>` },
    { num: 3, body: '<< >>', stream: CONTENT('One of a million') },
  ];
  // Node 10 is the root; node 10 + d lists node 10 + d + 1 (or the page at the bottom).
  for (let d = 0; d < depth; d++) {
    const kid = d === depth - 1 ? 2 : 10 + d + 1;
    const parent = d === 0 ? '' : ` /Parent ${10 + d - 1} 0 R`;
    objects.push({
      num: 10 + d,
      body: `<< /Type /Pages${parent} /Count ${fanout ** (depth - d)} /Kids [${Array(fanout).fill(`${kid} 0 R`).join(' ')}] >>`,
    });
  }
  return buildPdf(objects, 1);
}

/**
 * A flat page tree whose /Kids lists one page object `times` times (/Count says so too). With `widths`, the
 * page's own /Resources is a direct dictionary holding a font with a /Widths array of that many numbers.
 */
export function repeatedPagePdf(times: number, opts: { text?: string; widths?: number } = {}): Uint8Array {
  const font = opts.widths
    ? `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar ${opts.widths - 1} /Widths [${Array(opts.widths).fill(556).join(' ')}] >>`
    : '5 0 R';
  return buildPdf(
    [
      { num: 1, body: '<< /Type /Catalog /Pages 2 0 R >>' },
      { num: 2, body: `<< /Type /Pages /Count ${times} /Kids [${Array(times).fill('3 0 R').join(' ')}] >>` },
      { num: 3, body: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 ${font} >> >> >>` },
      { num: 4, body: '<< >>', stream: CONTENT(opts.text ?? 'Repeated page') },
      { num: 5, body: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
    ],
    1,
  );
}

/** A page tree whose second level lists the root again: a loop that pdf-lib's recursive walk never leaves. */
export function loopingPageTreePdf(): Uint8Array {
  return buildPdf(
    [
      { num: 1, body: '<< /Type /Catalog /Pages 2 0 R >>' },
      { num: 2, body: '<< /Type /Pages /Count 2 /Kids [3 0 R 4 0 R] >>' },
      { num: 3, body: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 5 0 R >>' },
      { num: 4, body: '<< /Type /Pages /Parent 2 0 R /Count 1 /Kids [2 0 R] >>' },
      { num: 5, body: '<< >>', stream: CONTENT('Loop') },
    ],
    1,
  );
}

/**
 * A million real page objects, as a large producer would write them: the page tree's root lists every page
 * in one /Kids array (12 MB of references), everything packed into object streams (9.5 MB in all, like the probe's file). Every
 * count in the file is true; only its size is hostile.
 */
export function flatMillionPagePdf(pages = 1_000_000): Uint8Array {
  const objects: RawObject[] = [
    { num: 1, body: '<< /Type /Catalog /Pages 2 0 R >>' },
    { num: 3, body: '<< >>', stream: CONTENT('One of many') },
  ];
  const kids: string[] = [];
  const packed: number[] = [];
  for (let i = 0; i < pages; i++) {
    const num = 10 + i;
    kids.push(`${num} 0 R`);
    packed.push(num);
    objects.push({ num, body: '<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>' });
  }
  objects.push({ num: 2, body: `<< /Type /Pages /Count ${pages} /MediaBox [0 0 200 200] /Kids [${kids.join(' ')}] >>` });
  return buildPdf(objects, 1, [...packed, 2]);
}

/**
 * A small DOCX (1.4 KB) that LibreOffice takes seconds to lay out: `tables` tables nested each in the
 * previous one's cell. 70 take about 5 s here, like each of the probe's 50 slow files (288 s in all); the
 * time grows much faster than the nesting (100: about 20 s).
 */
export function slowDocx(tables = 70): Uint8Array {
  const open =
    '<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/></w:tblGrid><w:tr><w:tc><w:p><w:r><w:t>t</w:t></w:r></w:p>';
  const close = '<w:p/></w:tc></w:tr></w:tbl>';
  return new Uint8Array(
    buildZip([...docxShell(), entry('word/document.xml', DOC_OPEN + open.repeat(tables) + close.repeat(tables) + '<w:p/>' + DOC_CLOSE)]),
  );
}
