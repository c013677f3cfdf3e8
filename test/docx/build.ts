/**
 * Minimal DOCX packages built in memory for the reader's tests: a body (with the namespaces Word declares for
 * math, drawings, shapes, groups, VML and markup compatibility), and any extra parts, relationships of the main
 * document part and content-type entries. Stored, not deflated: a repetitive hostile body must reach the
 * reader, not the package's ratio bound.
 */
import { buildZip } from '../support/zip.js';

export const NAMESPACES = [
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"',
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"',
  'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"',
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"',
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"',
  'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"',
  'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"',
  'xmlns:wpg="http://schemas.microsoft.com/office/word/2010/wordprocessingGroup"',
  'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"',
  'xmlns:v="urn:schemas-microsoft-com:vml"',
  'xmlns:o="urn:schemas-microsoft-com:office:office"',
  'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"',
].join(' ');

export interface DocxParts {
  /** Extra parts: name → content. */
  parts?: Record<string, string | Uint8Array>;
  /** Relationships of word/document.xml: id → [type (short name under officeDocument/2006/relationships), target]. */
  rels?: Record<string, [string, string]>;
  /** Extra [Content_Types].xml entries (Default and Override elements). */
  types?: string;
  /** word/styles.xml body (the w:style elements). */
  styles?: string;
  /** word/numbering.xml body. */
  numbering?: string;
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';

export function docx(body: string, o: DocxParts = {}): Uint8Array {
  const rels: Record<string, [string, string]> = { ...o.rels };
  const parts: Record<string, string | Uint8Array> = { ...o.parts };
  if (o.styles !== undefined) {
    rels.rStyles = ['styles', 'styles.xml'];
    parts['word/styles.xml'] = `<?xml version="1.0"?><w:styles ${NAMESPACES}>${o.styles}</w:styles>`;
  }
  if (o.numbering !== undefined) {
    rels.rNumbering = ['numbering', 'numbering.xml'];
    parts['word/numbering.xml'] = `<?xml version="1.0"?><w:numbering ${NAMESPACES}>${o.numbering}</w:numbering>`;
  }
  const relXml = Object.entries(rels)
    .map(
      ([id, [type, target]]) =>
        `<Relationship Id="${id}" Type="${type.includes(':') ? type : REL + type}" Target="${target}"${/^[a-z]+:/.test(target) ? ' TargetMode="External"' : ''}/>`,
    )
    .join('');
  const entries: Array<{ name: string; data: string | Uint8Array }> = [
    {
      name: '[Content_Types].xml',
      data: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>${o.types ?? ''}</Types>`,
    },
    {
      name: '_rels/.rels',
      data: '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    { name: 'word/document.xml', data: `<?xml version="1.0"?><w:document ${NAMESPACES}><w:body>${body}</w:body></w:document>` },
    {
      name: 'word/_rels/document.xml.rels',
      data: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relXml}</Relationships>`,
    },
    ...Object.entries(parts).map(([name, data]) => ({ name, data })),
  ];
  return new Uint8Array(
    buildZip(entries.map((e) => ({ name: e.name, data: typeof e.data === 'string' ? Buffer.from(e.data) : Buffer.from(e.data), store: true }))),
  );
}

/** An m:r with its text. */
export const mr = (t: string, rPr = '') => `<m:r>${rPr}<m:t>${t}</m:t></m:r>`;
