/**
 * Hostile and valid inputs for every engine, generated in code (nothing large is checked in), shared by the
 * adversarial suite and bench/soak.ts. Each hostile case says which request to send and which answers the
 * contract allows; the judgement of an answer lives here too (`judge`) so the suite and the soak agree.
 *
 * The acceptable answers follow one rule: a bomb against a parser that must be bounded (ZIP inflation, XML
 * depth/entities, PDF cross-reference sizes, CSS selector matching) must be refused with a 4xx/422 naming the
 * limit, never only stopped by the time budget (504); honest-but-heavy input may succeed (valid output), be
 * refused as too large (413/422) or hit the time budget (504).
 */
import crypto from 'node:crypto';
import { strFromU8, unzipSync } from 'fflate';
import { buildZip, bombEntry, entry, storedEntry, overlappingZip, repeatedZlib, type RawEntry } from './zip.js';

// ───────────────────────────── requests and judgement ─────────────────────────────

export type Endpoint =
  'convert md→docx' | 'convert html→docx' | 'convert docx→pdf' | 'convert md→pdf' | 'annotate' | 'annotate/fields' | 'sign' | 'verify' | 'health';

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  /** Already serialised JSON (large bodies are stringified once). */
  json?: string;
  file?: { name: string; bytes: Uint8Array };
}

export type Budget = 'engine' | 'office' | 'engine+office' | 'none';

export interface Answer {
  status: number;
  body: Buffer;
  contentType: string;
}

export interface HostileCase {
  /** Stable id, e.g. `zip.single-entry-2GiB@annotate`. */
  id: string;
  /** The hostile class as the issue names it. */
  klass: string;
  endpoint: Endpoint;
  budget: Budget;
  /** Statuses allowed besides 200. 200 is allowed only when `ok` is set and the output passes it. */
  refuse: number[];
  ok?: (a: Answer) => string | undefined;
  build(): RequestSpec;
}

/** Error codes the contract ties to each status (docs/api.md § Common rules). */
const CODES: Record<number, string[]> = {
  400: ['INVALID_FILE_FORMAT', 'VALIDATION_ERROR'],
  413: ['FILE_TOO_LARGE'],
  422: ['UNPROCESSABLE_DOCUMENT', 'VALIDATION_ERROR'],
  429: ['RATE_LIMIT_ERROR'],
  500: ['INTERNAL_ERROR'],
  503: ['SERVICE_UNAVAILABLE'],
  504: ['CONVERSION_TIMEOUT'],
};

/** The error envelope's code, or a description of what is wrong with it. */
export function envelope(a: Answer): { code?: string; message?: string; problem?: string } {
  let j: any;
  try {
    j = JSON.parse(a.body.toString('utf8'));
  } catch {
    return { problem: `not JSON (${a.contentType})` };
  }
  for (const k of ['code', 'error', 'message', 'requestId']) if (typeof j?.[k] !== 'string') return { problem: `envelope lacks ${k}` };
  return { code: j.code, message: j.message };
}

/** undefined when the answer is one the case allows, else why not. */
export function judge(c: HostileCase, a: Answer): string | undefined {
  if (a.status === 200) {
    if (!c.ok) return '200 where the contract requires a refusal';
    const why = c.ok(a);
    return why ? `200 but ${why}` : undefined;
  }
  if (!c.refuse.includes(a.status)) return `status ${a.status} not in ${[200, ...c.refuse].filter((s) => s !== 200 || c.ok).join('/')}`;
  const e = envelope(a);
  if (e.problem) return `error answer: ${e.problem}`;
  if (!(CODES[a.status] ?? []).includes(e.code!)) return `code ${e.code} does not match status ${a.status}`;
  return undefined;
}

// ───────────────────────────── output validators ─────────────────────────────

/** A DOCX the caller can open: a ZIP with a main part, and no entry name that escapes the package. */
export function docxProblem(bytes: Uint8Array): string | undefined {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes);
  } catch (e) {
    return `output is not a ZIP (${(e as Error).message})`;
  }
  const bad = Object.keys(files).find((n) => n.startsWith('/') || n.split(/[\\/]/).includes('..'));
  if (bad) return `output keeps the entry name ${JSON.stringify(bad)}`;
  const main = files['word/document.xml'];
  if (!main) return 'output has no word/document.xml';
  if (!/<w:document[\s>]/.test(strFromU8(main.subarray(0, 4096)))) return 'word/document.xml has no w:document';
  return undefined;
}

export function pdfProblem(bytes: Uint8Array): string | undefined {
  const b = Buffer.from(bytes);
  if (b.subarray(0, 5).toString('latin1') !== '%PDF-') return 'output is not a PDF';
  if (!b.subarray(-1024).toString('latin1').includes('%%EOF')) return 'PDF has no %%EOF';
  return undefined;
}

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const okDocxFile = (a: Answer) => (a.contentType.startsWith(DOCX_MIME) ? docxProblem(a.body) : `content type ${a.contentType}`);
const okPdfFile = (a: Answer) => (a.contentType.startsWith('application/pdf') ? pdfProblem(a.body) : `content type ${a.contentType}`);
const okAnnotate = (a: Answer) => {
  const j = JSON.parse(a.body.toString('utf8'));
  if (typeof j?.document?.base64 !== 'string' || !j.report) return 'no document/report';
  return docxProblem(Buffer.from(j.document.base64, 'base64'));
};
const okFields = (a: Answer) => (Array.isArray(JSON.parse(a.body.toString('utf8'))?.fields) ? undefined : 'no fields array');
const okSign = (a: Answer) => {
  const j = JSON.parse(a.body.toString('utf8'));
  if (typeof j?.document?.base64 !== 'string') return 'no document';
  const pdf = Buffer.from(j.document.base64, 'base64');
  return pdfProblem(pdf) ?? (pdf.includes('/ByteRange') ? undefined : 'no signature in the output');
};
const INDICATIONS = ['TOTAL_PASSED', 'INDETERMINATE', 'TOTAL_FAILED', 'NO_SIGNATURE_FOUND'];
const okVerify = (a: Answer) => {
  const j = JSON.parse(a.body.toString('utf8'));
  return typeof j?.valid === 'boolean' && INDICATIONS.includes(j.indication) ? undefined : 'not a verification report';
};

// ───────────────────────────── DOCX building blocks ─────────────────────────────

const W_NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
export const DOC_OPEN = `${XML_DECL}<w:document ${W_NS}><w:body>`;
export const DOC_CLOSE = '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>';

/** The package parts around word/document.xml. */
export function docxShell(): RawEntry[] {
  return [
    entry(
      '[Content_Types].xml',
      `${XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    ),
    entry(
      '_rels/.rels',
      `${XML_DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    entry(
      'word/_rels/document.xml.rels',
      `${XML_DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>`,
    ),
  ];
}

const para = (text: string) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/** A small honest template: a {{name}} placeholder, a tagged content control and a table holding {{rows}}. */
export function templateDocx(): Buffer {
  const body =
    para('Dear {{name}},') +
    '<w:sdt><w:sdtPr><w:alias w:val="City"/><w:tag w:val="city"/><w:id w:val="101"/></w:sdtPr><w:sdtContent><w:p><w:r><w:t>City</w:t></w:r></w:p></w:sdtContent></w:sdt>' +
    '<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid>' +
    '<w:tr><w:tc><w:p><w:r><w:t>{{rows}}</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>B</w:t></w:r></w:p></w:tc></w:tr></w:tbl>' +
    para('Regards');
  return buildZip([...docxShell(), entry('word/document.xml', DOC_OPEN + body + DOC_CLOSE)]);
}

// ───────────────────────────── PDF building blocks ─────────────────────────────

/**
 * A PDF from numbered object bodies (object i+1 = bodies[i]) with a correct classic xref table unless
 * `tail` replaces everything after the objects (for hostile xref data; it gets the objects' offsets).
 */
export function buildPdf(bodies: Array<string | Buffer>, opts: { trailer?: string; tail?: (offsets: number[], end: number) => string } = {}): Buffer {
  const chunks: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let pos = chunks[0]!.length;
  const offsets: number[] = [];
  bodies.forEach((b, i) => {
    offsets.push(pos);
    const c = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      typeof b === 'string' ? Buffer.from(b, 'latin1') : b,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    chunks.push(c);
    pos += c.length;
  });
  if (opts.tail) {
    chunks.push(Buffer.from(opts.tail(offsets, pos), 'latin1'));
    return Buffer.concat(chunks);
  }
  let xref = `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) xref += `${String(o).padStart(10, '0')} 00000 n \n`;
  xref += `trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R ${opts.trailer ?? ''}>>\nstartxref\n${pos}\n%%EOF\n`;
  chunks.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(chunks);
}

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';
const PAGES = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
const PAGE = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>';
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
const content = (text: string) => {
  const s = `BT /F1 14 Tf 40 780 Td (${text}) Tj ET`;
  return `<< /Length ${s.length} >>\nstream\n${s}\nendstream`;
};

/** A one-page honest PDF (five objects, classic xref). */
export function simplePdf(text = 'Folio adversarial'): Buffer {
  return buildPdf([CATALOG, PAGES, PAGE, content(text), FONT]);
}

// ───────────────────────────── lazily built, cached inputs ─────────────────────────────

function lazy<T>(f: () => T): () => T {
  let v: T | undefined;
  return () => (v ??= f());
}

const MiB = 1024 * 1024;
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const docJson = (bytes: Uint8Array, extra: Record<string, unknown> = {}) => JSON.stringify({ document: { base64: b64(bytes) }, ...extra });

export const SIGNER = { name: 'Ada Lovelace', email: 'ada@example.com', ip: '203.0.113.7', userAgent: 'folio-adversarial' };
export const AUDIT = [{ type: 'document.signed', timestamp: '2026-11-20T09:16:30Z' }];
const signJson = (pdf: Uint8Array) => docJson(pdf, { signer: SIGNER, auditTrail: AUDIT });

const convert = (from: string, to: string, name: string, bytes: Uint8Array): RequestSpec => ({
  method: 'POST',
  path: `/v1/convert?from=${from}&to=${to}`,
  file: { name, bytes },
});
const post = (path: string, json: string): RequestSpec => ({ method: 'POST', path, json });

// HTML ------------------------------------------------------------------------------------------------

/** 40 nested divs and one 41-level descendant selector: exponential backtracking in a naive matcher. */
const nestedSelectorHtml = lazy(() => {
  const sel = Array(41).fill('div').join(' ');
  return `<!doctype html><html><head><style>${sel} { color: red }</style></head><body>${'<div>'.repeat(40)}x${'</div>'.repeat(40)}</body></html>`;
});

/** 32 KB of descendant chains of every depth from 20 to 40, over the same 40 nested divs. */
const selectorChainsHtml = lazy(() => {
  let css = '';
  for (let i = 0; css.length < 32 * 1024; i++) {
    const depth = 20 + (i % 21);
    css += `${Array(depth)
      .fill(i % 2 ? 'div' : 'div:not(p)')
      .join(' ')} { margin-left: ${i % 9}pt }\n`;
  }
  return `<!doctype html><html><head><style>${css}</style></head><body>${'<div>'.repeat(40)}x${'</div>'.repeat(40)}</body></html>`;
});

/** The same bombs as an annotate `html` value (CSS of an html field runs through the same code). */
const annotateHtml = (html: string) =>
  JSON.stringify({ document: { base64: b64(templateDocx()) }, fields: [{ id: 'name', type: 'html', value: html }] });

// Markdown --------------------------------------------------------------------------------------------

/** Valid Markdown with `n` footnotes: linear work, but a lot of it (20,000 ≈ 5 s of a thread). */
export function footnotesMarkdown(n: number): string {
  const refs = Array.from({ length: n }, (_, i) => `word[^n${i}]`).join(' ');
  const defs = Array.from({ length: n }, (_, i) => `[^n${i}]: note ${i}`).join('\n');
  return `# Notes\n\n${refs}\n\n${defs}\n`;
}

const md = {
  deepBrackets: lazy(() => '['.repeat(60_000) + 'x' + ']'.repeat(60_000) + '\n\n' + '[a]('.repeat(20_000) + '\n'),
  emphasisRuns: lazy(() => '*a_'.repeat(40_000) + '\n\n' + '**'.repeat(30_000) + 'x' + '_'.repeat(60_000) + '\n'),
  nestedLists: lazy(
    () => '- '.repeat(10_000) + 'x\n\n' + Array.from({ length: 3_000 }, (_, i) => `${'  '.repeat(i % 200)}- item ${i}`).join('\n') + '\n',
  ),
  nestedQuotes: lazy(() => '> '.repeat(20_000) + 'x\n\n' + '>'.repeat(50_000) + ' y\n'),
  footnotes: lazy(() => footnotesMarkdown(20_000)),
  wideTable: lazy(() => {
    const n = 2_000;
    const row = (f: (i: number) => string) => '|' + Array.from({ length: n }, (_, i) => f(i)).join('|') + '|';
    return `${row((i) => `c${i}`)}\n${row(() => '---')}\n${row((i) => `${i}`)}\n${row((i) => `${i * 2}`)}\n`;
  }),
  longTable: lazy(() => {
    const rows = Array.from({ length: 2_000 }, (_, i) => `| ${i} | row ${i} text | ${i * 7} | ${(i * 31) % 97} |`);
    return `# Long table\n\n| # | text | a | b |\n|---|---|---|---|\n${rows.join('\n')}\n`;
  }),
};

// ZIP bombs ---------------------------------------------------------------------------------------------

const zeros1M = new Uint8Array(MiB);
const spaces1M = new Uint8Array(MiB).fill(0x20);

const zips = {
  /** word/document.xml: an XML start, then 2 GiB of whitespace inside the body (~2 MB compressed). */
  singleEntry: lazy(() =>
    buildZip([
      ...docxShell(),
      bombEntry('word/document.xml', spaces1M, 2047, {
        prefix: Buffer.from(DOC_OPEN + '<w:p><w:r><w:t>{{name}}</w:t></w:r></w:p>'),
        suffix: Buffer.from(DOC_CLOSE),
      }),
    ]),
  ),
  /** A media part of 2 GiB of zeros next to an honest document part. */
  singleMedia: lazy(() =>
    buildZip([
      ...docxShell(),
      entry('word/document.xml', DOC_OPEN + para('{{name}}') + DOC_CLOSE),
      bombEntry('word/media/image1.png', zeros1M, 2047),
    ]),
  ),
  /** 60,000 tiny entries (the ZIP32 limit is 65,535). */
  manyEntries: lazy(() => {
    const small = Array.from({ length: 60_000 }, (_, i) => storedEntry(`customXml/item${i}.xml`, `<a>${i}</a>`));
    return buildZip([...docxShell(), entry('word/document.xml', DOC_OPEN + para('{{name}}') + DOC_CLOSE), ...small]);
  }),
  /** 1,000 directory records pointing at one 64 MiB entry: 64 GiB for a reader that trusts the directory. */
  overlapping: lazy(() =>
    overlappingZip(
      [...docxShell(), entry('word/document.xml', DOC_OPEN + para('{{name}}') + DOC_CLOSE)],
      bombEntry('word/media/big.bin', zeros1M, 64),
      1_000,
      (i) => `word/media/image${i}.png`,
    ),
  ),
  /** document.xml declares 2,000 bytes and inflates to 1 GiB of whitespace. */
  lyingSize: lazy(() =>
    buildZip([
      ...docxShell(),
      bombEntry('word/document.xml', spaces1M, 1024, { prefix: Buffer.from(DOC_OPEN), suffix: Buffer.from(DOC_CLOSE), declaredSize: 2_000 }),
    ]),
  ),
  /** Entry names that climb out of the package. */
  traversal: lazy(() =>
    buildZip([
      ...docxShell(),
      entry('word/document.xml', DOC_OPEN + para('Hello {{name}}') + DOC_CLOSE),
      entry('../../x', 'escaped'),
      entry('word/../../../etc/folio-y', 'escaped'),
      entry('/abs/z', 'absolute'),
    ]),
  ),
  /** An honest-looking 120 MB document part (paragraphs), ~1 MB compressed. */
  bigPart: lazy(() => {
    const unit = Buffer.from(para('{{name}} lorem ipsum dolor sit amet').repeat(20_000));
    return buildZip([
      ...docxShell(),
      bombEntry('word/document.xml', unit, Math.ceil((120 * MiB) / unit.length), { prefix: Buffer.from(DOC_OPEN), suffix: Buffer.from(DOC_CLOSE) }),
    ]);
  }),
};

// XML bombs ---------------------------------------------------------------------------------------------

const xml = {
  /** Billion laughs in word/document.xml, carrying a {{name}} placeholder in every expansion. */
  entities: lazy(() => {
    let dtd = '<!ENTITY l0 "{{name}} lol">';
    for (let i = 1; i <= 9; i++) dtd += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
    const doc = `${XML_DECL}<!DOCTYPE w:document [${dtd}]><w:document ${W_NS}><w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p>${DOC_CLOSE}`;
    return buildZip([...docxShell(), entry('word/document.xml', doc)]);
  }),
  /** 100,000 nested content controls (7 MB of XML, deflated to a few KB). */
  depth: lazy(() => {
    const open = '<w:sdt><w:sdtPr><w:tag w:val="deep"/></w:sdtPr><w:sdtContent>';
    const n = 100_000;
    const doc = DOC_OPEN + open.repeat(n) + para('{{name}}') + '</w:sdtContent></w:sdt>'.repeat(n) + DOC_CLOSE;
    return buildZip([...docxShell(), entry('word/document.xml', doc)]);
  }),
};

// PDFs --------------------------------------------------------------------------------------------------

const pdfs = {
  /** The 603-byte class: a cross-reference stream declaring /W [100 100 100] and a 2^31 /Index. */
  xrefHuge: lazy(() =>
    buildPdf([CATALOG, PAGES, PAGE, content('x'), FONT], {
      tail: (_o, end) =>
        `6 0 obj\n<< /Type /XRef /Size 2147483647 /W [100 100 100] /Index [0 2147483647 2147483647 2147483647] /Root 1 0 R /Length 10 >>\nstream\n0123456789\nendstream\nendobj\nstartxref\n${end}\n%%EOF\n`,
    }),
  ),
  /** The bounded variant: /W [4 4 4] over 20 million declared entries with 300 bytes of data. */
  xrefWide: lazy(() =>
    buildPdf([CATALOG, PAGES, PAGE, content('x'), FONT], {
      tail: (_o, end) =>
        `6 0 obj\n<< /Type /XRef /Size 20000000 /W [4 4 4] /Index [0 20000000] /Root 1 0 R /Length 300 >>\nstream\n${'\x00'.repeat(300)}\nendstream\nendobj\nstartxref\n${end}\n%%EOF\n`,
    }),
  ),
  /** Two xref sections whose /Prev point at each other, and one pointing at itself. */
  cyclicPrev: lazy(() =>
    buildPdf([CATALOG, PAGES, PAGE, content('x'), FONT], {
      tail: (offsets, end) => {
        let table = 'xref\n0 6\n0000000000 65535 f \n';
        for (const o of offsets) table += `${String(o).padStart(10, '0')} 00000 n \n`;
        const first = end;
        const firstSection = `${table}trailer\n<< /Size 6 /Root 1 0 R /Prev ${first} >>\n`;
        const second = first + firstSection.length;
        const secondSection = `${table}trailer\n<< /Size 6 /Root 1 0 R /Prev ${first} /XRefStm ${second} >>\n`;
        // first → itself; the last section → first → first …
        return firstSection + secondSection + `startxref\n${second}\n%%EOF\n`;
      },
    }),
  ),
  /** An array nested 100,000 deep, referenced from the page. */
  deepArrays: lazy(() =>
    buildPdf([CATALOG, PAGES, PAGE.replace('/Contents', '/Deep 6 0 R /Contents'), content('x'), FONT, '['.repeat(100_000) + ']'.repeat(100_000)]),
  ),
  /** An object stream that /Extends itself, holding an object that claims to live in it again. */
  objStmLoop: lazy(() => {
    const inner = '7 0 8 15 << /A 7 0 R >> << /Type /ObjStm /Extends 6 0 R >>';
    return buildPdf([
      CATALOG,
      PAGES,
      PAGE.replace('/Contents', '/Loop 7 0 R /Contents'),
      content('x'),
      FONT,
      `<< /Type /ObjStm /N 2 /First 9 /Extends 6 0 R /Length ${inner.length} >>\nstream\n${inner}\nendstream`,
    ]);
  }),
  /** An object stream that inflates to 1.5 GiB (~1.5 MB in the file). */
  objStmBomb: lazy(() => {
    const z = repeatedZlib(spaces1M, 1536, Buffer.from('7 0 '));
    return buildPdf([
      CATALOG,
      PAGES,
      PAGE.replace('/Contents', '/Big 7 0 R /Contents'),
      content('x'),
      FONT,
      Buffer.concat([
        Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.bytes.length} >>\nstream\n`, 'latin1'),
        z.bytes,
        Buffer.from('\nendstream', 'latin1'),
      ]),
    ]);
  }),
  /** `%PDF-1.7` and 20 MB of random bytes. */
  noise: lazy(() => Buffer.concat([Buffer.from('%PDF-1.7\n', 'latin1'), crypto.randomBytes(20 * MiB)])),
};

// Oversize but honest ---------------------------------------------------------------------------------

const honest = {
  /** 50,000 {{placeholders}} each split across three runs, as Word leaves them after editing. */
  splitPlaceholders: lazy(() => {
    const p = (i: number) => `<w:p><w:r><w:t>{{</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>f${i}</w:t></w:r><w:r><w:t>}}</w:t></w:r></w:p>`;
    return buildZip([...docxShell(), entry('word/document.xml', DOC_OPEN + Array.from({ length: 50_000 }, (_, i) => p(i)).join('') + DOC_CLOSE)]);
  }),
  /** 5,000 tables, each nested in the previous one's cell. */
  nestedTables: lazy(() => {
    const n = 5_000;
    const open =
      '<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/></w:tblGrid><w:tr><w:tc><w:p><w:r><w:t>t</w:t></w:r></w:p>';
    const close = '<w:p/></w:tc></w:tr></w:tbl>';
    return buildZip([...docxShell(), entry('word/document.xml', DOC_OPEN + open.repeat(n) + close.repeat(n) + '<w:p/>' + DOC_CLOSE)]);
  }),
  /** 5,000 signature fields, each with a (bogus) CMS blob and a byte range. */
  manySignatures: lazy(() => {
    const n = 5_000;
    const fields = Array.from({ length: n }, (_, i) => `${7 + i} 0 R`).join(' ');
    const bodies: string[] = [
      `<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [${fields}] /SigFlags 3 >> >>`,
      PAGES,
      PAGE,
      content('x'),
      FONT,
      '<< >>',
    ];
    const cms = '30'.padEnd(512, '0');
    for (let i = 0; i < n; i++) {
      bodies.push(
        `<< /FT /Sig /T (Sig${i}) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /V << /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange [0 100 300 100] /Contents <${cms}> /M (D:20261120091630Z) >> >>`,
      );
    }
    return buildPdf(bodies);
  }),
};

// ───────────────────────────── the hostile catalogue ─────────────────────────────

const R_BOMB = [400, 413, 422];
const R_HEAVY = [413, 422, 504];

function both(id: string, klass: string, pdf: () => Buffer, signRefuse: number[], signOk = false): HostileCase[] {
  return [
    {
      id: `${id}@sign`,
      klass,
      endpoint: 'sign',
      budget: 'engine',
      refuse: signRefuse,
      ok: signOk ? okSign : undefined,
      build: () => post('/v1/sign', signJson(pdf())),
    },
    {
      id: `${id}@verify`,
      klass,
      endpoint: 'verify',
      budget: 'engine',
      refuse: [400, 422],
      ok: okVerify,
      build: () => post('/v1/verify', docJson(pdf())),
    },
  ];
}

/**
 * The same template sent to /v1/annotate (with one text field) and to /v1/annotate/fields, in that order.
 * `ok` judges a 200 per endpoint (absent: a 200 is wrong); `false` leaves that endpoint out.
 */
function annotateCases(
  id: string,
  klass: string,
  template: () => Uint8Array,
  refuse: number[],
  ok: { annotate?: HostileCase['ok'] | false; fields?: HostileCase['ok'] | false } = {},
): HostileCase[] {
  const out: HostileCase[] = [];
  if (ok.annotate !== false)
    out.push({
      id: `${id}@annotate`,
      klass,
      endpoint: 'annotate',
      budget: 'engine',
      refuse,
      ok: ok.annotate,
      build: () => post('/v1/annotate', docJson(template(), { fields: [{ id: 'name', type: 'text', value: 'x' }] })),
    });
  if (ok.fields !== false)
    out.push({
      id: `${id}@fields`,
      klass,
      endpoint: 'annotate/fields',
      budget: 'engine',
      refuse,
      ok: ok.fields,
      build: () => post('/v1/annotate/fields', docJson(template())),
    });
  return out;
}

export const HOSTILE: HostileCase[] = [
  // HTML → DOCX and annotate html values: CSS selector matching must be bounded.
  {
    id: 'html.nested-selector@convert',
    klass: 'HTML 41-level selector over 40 nested divs',
    endpoint: 'convert html→docx',
    budget: 'engine',
    refuse: [400, 422],
    ok: okDocxFile,
    build: () => convert('html', 'docx', 'bomb.html', Buffer.from(nestedSelectorHtml())),
  },
  {
    id: 'html.selector-chains-32k@convert',
    klass: 'HTML 32 KB of selector chains',
    endpoint: 'convert html→docx',
    budget: 'engine',
    refuse: [400, 422],
    ok: okDocxFile,
    build: () => convert('html', 'docx', 'chains.html', Buffer.from(selectorChainsHtml())),
  },
  {
    id: 'html.nested-selector@annotate',
    klass: 'annotate html value: 41-level selector',
    endpoint: 'annotate',
    budget: 'engine',
    refuse: [400, 422],
    ok: okAnnotate,
    build: () => post('/v1/annotate', annotateHtml(nestedSelectorHtml())),
  },
  {
    id: 'html.selector-chains-32k@annotate',
    klass: 'annotate html value: 32 KB of selector chains',
    endpoint: 'annotate',
    budget: 'engine',
    refuse: [400, 422],
    ok: okAnnotate,
    build: () => post('/v1/annotate', annotateHtml(selectorChainsHtml())),
  },

  // Markdown → DOCX: valid CommonMark however odd, so a valid DOCX, a refusal as too large, or the budget.
  ...(
    [
      ['md.deep-brackets', 'Markdown 60,000 nested brackets', md.deepBrackets],
      ['md.emphasis-runs', 'Markdown emphasis runs', md.emphasisRuns],
      ['md.nested-lists', 'Markdown 10,000 nested lists', md.nestedLists],
      ['md.nested-quotes', 'Markdown 20,000 nested quotes', md.nestedQuotes],
      ['md.footnotes-20k', 'Markdown 20,000 footnotes', md.footnotes],
      ['md.table-2000-columns', 'Markdown 2,000-column table', md.wideTable],
    ] as const
  ).map(([id, klass, text]): HostileCase => ({
    id: `${id}@convert`,
    klass,
    endpoint: 'convert md→docx',
    budget: 'engine',
    refuse: R_HEAVY,
    ok: okDocxFile,
    build: () => convert('md', 'docx', 'input.md', Buffer.from(text())),
  })),

  // ZIP bombs: the inflation budget must stop them while inflating.
  ...annotateCases('zip.single-entry-2GiB', 'ZIP: document part inflating to 2 GiB', zips.singleEntry, R_BOMB),
  {
    id: 'zip.single-entry-2GiB@docx→pdf',
    klass: 'ZIP: document part inflating to 2 GiB',
    endpoint: 'convert docx→pdf',
    budget: 'engine+office',
    refuse: R_BOMB,
    build: () => convert('docx', 'pdf', 'bomb.docx', zips.singleEntry()),
  },
  // A media part nobody needs to read: passing it through untouched (200) is as good as refusing it.
  ...annotateCases('zip.media-2GiB', 'ZIP: media part inflating to 2 GiB', zips.singleMedia, R_BOMB, { annotate: okAnnotate, fields: false }),
  ...annotateCases('zip.many-entries-60k', 'ZIP: 60,000 entries', zips.manyEntries, R_BOMB, { annotate: okAnnotate, fields: okFields }),
  ...annotateCases('zip.overlapping-1000x64MiB', 'ZIP: 1,000 overlapping entries of 64 MiB', zips.overlapping, R_BOMB, { fields: okFields }),
  {
    id: 'zip.overlapping-1000x64MiB@docx→pdf',
    klass: 'ZIP: 1,000 overlapping entries of 64 MiB',
    endpoint: 'convert docx→pdf',
    budget: 'engine+office',
    refuse: R_BOMB,
    build: () => convert('docx', 'pdf', 'overlap.docx', zips.overlapping()),
  },
  ...annotateCases('zip.lying-size-1GiB', 'ZIP: declares 2 KB, inflates to 1 GiB', zips.lyingSize, R_BOMB),
  ...annotateCases('zip.traversal-names', 'ZIP: ../../x entry names', zips.traversal, [400, 422], { annotate: okAnnotate, fields: false }),

  // XML bombs in word/document.xml.
  ...annotateCases('xml.entity-bomb', 'XML billion laughs in document.xml', xml.entities, [400, 422], { annotate: okAnnotate, fields: okFields }),
  ...annotateCases('xml.depth-100k', 'XML 100,000 nested content controls', xml.depth, [400, 422]),

  // PDFs for sign and verify (verify answers 200 for every readable PDF).
  // The objects before a bogus xref stream are intact: a reader that falls back to scanning them may sign.
  ...both('pdf.xref-W100-Index2^31', 'PDF xref stream /W [100 100 100], /Index 2^31', pdfs.xrefHuge, [400, 422], true),
  ...both('pdf.xref-W4-Index20M', 'PDF xref stream /W [4 4 4], /Index 20 M', pdfs.xrefWide, [400, 422], true),
  ...both('pdf.cyclic-prev', 'PDF cyclic /Prev', pdfs.cyclicPrev, [400, 422], true),
  ...both('pdf.deep-arrays-100k', 'PDF array nested 100,000 deep', pdfs.deepArrays, [400, 422], true),
  ...both('pdf.objstm-loop', 'PDF object stream /Extends loop', pdfs.objStmLoop, [400, 422], true),
  // Nothing refers to the bomb's object: a reader that never inflates it may sign the rest.
  ...both('pdf.objstm-1.5GiB', 'PDF object stream inflating to 1.5 GiB', pdfs.objStmBomb, [400, 413, 422], true),
  ...both('pdf.noise-20MB', '%PDF + 20 MB noise', pdfs.noise, [400, 422]),

  // Oversize but honest.
  {
    id: 'honest.part-120MB@fields',
    klass: 'DOCX whose document part inflates to 120 MB',
    endpoint: 'annotate/fields',
    budget: 'engine',
    refuse: R_HEAVY,
    ok: okFields,
    build: () => post('/v1/annotate/fields', docJson(zips.bigPart())),
  },
  {
    id: 'honest.table-2000x200@annotate',
    klass: 'annotate 2,000 × 200 table',
    endpoint: 'annotate',
    budget: 'engine',
    refuse: R_HEAVY,
    ok: okAnnotate,
    build: () => {
      const rows = Array.from({ length: 2_000 }, (_, r) => Array.from({ length: 200 }, (_, c) => `r${r}c${c}`));
      return post(
        '/v1/annotate',
        JSON.stringify({ document: { base64: b64(templateDocx()) }, fields: [{ id: 'rows', type: 'table', value: rows }] }),
      );
    },
  },
  {
    id: 'honest.split-placeholders-50k@annotate',
    klass: 'annotate 50,000 split placeholders',
    endpoint: 'annotate',
    budget: 'engine',
    refuse: R_HEAVY,
    ok: okAnnotate,
    build: () => post('/v1/annotate', docJson(honest.splitPlaceholders(), { fields: [{ id: 'f1', type: 'text', value: 'x' }] })),
  },
  {
    id: 'honest.signatures-5000@verify',
    klass: 'verify a PDF with 5,000 signatures',
    endpoint: 'verify',
    budget: 'engine',
    refuse: R_HEAVY,
    ok: okVerify,
    build: () => post('/v1/verify', docJson(honest.manySignatures())),
  },
  {
    id: 'honest.nested-tables-5000@docx→pdf',
    klass: 'DOCX with 5,000 nested tables to PDF',
    endpoint: 'convert docx→pdf',
    budget: 'engine+office',
    refuse: R_HEAVY,
    ok: okPdfFile,
    build: () => convert('docx', 'pdf', 'nested.docx', honest.nestedTables()),
  },
  {
    id: 'honest.md-table-2000-rows@md→pdf',
    klass: 'Markdown 2,000-row table to PDF',
    endpoint: 'convert md→pdf',
    budget: 'engine+office',
    refuse: R_HEAVY,
    ok: okPdfFile,
    build: () => convert('md', 'pdf', 'table.md', Buffer.from(md.longTable())),
  },
];

// ───────────────────────────── valid traffic ─────────────────────────────

export interface ValidCase {
  endpoint: Endpoint;
  build(): RequestSpec;
  ok: (a: Answer) => string | undefined;
}

const validMd =
  '# Report\n\nSome *emphasis*, a [link](https://example.com) and a footnote[^1].\n\n- one\n  - two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[^1]: The note.\n';
const validHtml =
  '<!doctype html><html><head><style>p.lead { font-weight: bold } td { border: 1px solid #000 }</style></head><body><h1>Title</h1><p class="lead">Lead</p><table><tr><td colspan="2">a</td></tr><tr><td>b</td><td>c</td></tr></table></body></html>';

/** Cached so the soak's clients do not rebuild inputs per request. */
const validInputs = {
  pdf: lazy(() => simplePdf()),
  template: lazy(() => templateDocx()),
  annotateJson: lazy(() =>
    JSON.stringify({
      document: { base64: b64(templateDocx()) },
      fields: [
        { id: 'name', type: 'text', value: 'Grace' },
        { id: 'city', type: 'text', value: 'Arlington' },
        {
          id: 'rows',
          type: 'table',
          value: [
            ['1', '2'],
            ['3', '4'],
          ],
        },
      ],
    }),
  ),
};

/** One valid request per endpoint. `docxForPdf` is the DOCX to convert (a corpus file when present). */
export function validCases(docxForPdf: () => Uint8Array, signedPdf: () => Uint8Array): ValidCase[] {
  return [
    { endpoint: 'convert md→docx', build: () => convert('md', 'docx', 'report.md', Buffer.from(validMd)), ok: okDocxFile },
    { endpoint: 'convert html→docx', build: () => convert('html', 'docx', 'page.html', Buffer.from(validHtml)), ok: okDocxFile },
    { endpoint: 'convert docx→pdf', build: () => convert('docx', 'pdf', 'doc.docx', docxForPdf()), ok: okPdfFile },
    { endpoint: 'annotate', build: () => post('/v1/annotate', validInputs.annotateJson()), ok: okAnnotate },
    { endpoint: 'annotate/fields', build: () => post('/v1/annotate/fields', docJson(validInputs.template())), ok: okFields },
    { endpoint: 'sign', build: () => post('/v1/sign', signJson(validInputs.pdf())), ok: okSign },
    { endpoint: 'verify', build: () => post('/v1/verify', docJson(signedPdf())), ok: okVerify },
    {
      endpoint: 'health',
      build: () => ({ method: 'GET', path: '/v1/health' }),
      ok: (a) => (JSON.parse(a.body.toString()).status ? undefined : 'no status'),
    },
  ];
}

export { simplePdf as validPdf, templateDocx as validTemplate };
