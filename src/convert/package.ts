/**
 * Assembles a converted body into a DOCX package (ZIP written by src/docx/zip-writer.ts): document, Word built-in styles (pandoc's
 * names where Word has none), numbering, footnotes, settings, relationships, content types and properties.
 */
import type { ConvertedBody, ConvertOptions } from './html-to-docx.js';
import { pageGeometry } from './html-to-docx.js';
import { xmlAttr, xmlText } from './text.js';
import { STYLES_XML } from '../docx/styles.js';
import { BODY_NAMESPACES, CONTENT_TYPES_NS, NS, PACKAGE_RELS_NS, REL_TYPE as REL, WML_CONTENT_TYPE as WML, XML_DECL } from '../docx/namespaces.js';
import { customXmlItem } from '../docx/wordml/custom-xml.js';
import { footnotesPartXml } from '../docx/wordml/footnotes.js';
import { ISLANDS_NS } from '../docx/read/model.js';
import { islandsXml } from './markdown-islands.js';
import { numberingPartXml } from '../docx/wordml/numbering.js';
import { withFirstRowStyle } from '../docx/wordml/table.js';
import { writeZip, type ZipWriteEntry } from '../docx/zip-writer.js';

/** The style sheet, its table style's first row bold (header rows take their look from it). */
const DOC_STYLES_XML = withFirstRowStyle(STYLES_XML);

const SETTINGS_XML =
  XML_DECL +
  `<w:settings xmlns:w="${NS.w}"><w:defaultTabStop w:val="720"/><w:characterSpacingControl w:val="doNotCompress"/>` +
  '<w:footnotePr><w:footnote w:id="-1"/><w:footnote w:id="0"/></w:footnotePr><w:compat><w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat></w:settings>';

export function buildDocxPackage(body: ConvertedBody, options: ConvertOptions = {}): Uint8Array {
  const page = pageGeometry(options.pageSize);
  const sectPr =
    `<w:sectPr><w:footnotePr><w:numFmt w:val="decimal"/></w:footnotePr><w:pgSz w:w="${page.width}" w:h="${page.height}"/>` +
    `<w:pgMar w:top="${page.margin}" w:right="${page.margin}" w:bottom="${page.margin}" w:left="${page.margin}" w:header="708" w:footer="708" w:gutter="0"/>` +
    '<w:cols w:space="708"/><w:docGrid w:linePitch="360"/></w:sectPr>';
  // The body is by far the largest part: encoded on its own, it is not copied into one more string first.
  const document = Buffer.concat([
    Buffer.from(`${XML_DECL}<w:document ${BODY_NAMESPACES}><w:body>`, 'utf8'),
    Buffer.from(body.bodyXml, 'utf8'),
    Buffer.from(`${sectPr}</w:body></w:document>`, 'utf8'),
  ]);
  const numbering = numberingPartXml(body.abstractNums, body.nums);
  // The Markdown of the source islands (markdown-islands.ts): a Custom XML Data part, as Word stores its own.
  const islands = body.islands?.length ? customXmlItem(1, islandsXml(body.islands), ISLANDS_NS, 'rIdIslands') : undefined;

  let rels = `${XML_DECL}<Relationships xmlns="${PACKAGE_RELS_NS}">`;
  rels += `<Relationship Id="rIdStyles" Type="${REL}/styles" Target="styles.xml"/>`;
  rels += `<Relationship Id="rIdNumbering" Type="${REL}/numbering" Target="numbering.xml"/>`;
  rels += `<Relationship Id="rIdSettings" Type="${REL}/settings" Target="settings.xml"/>`;
  rels += `<Relationship Id="rIdFootnotes" Type="${REL}/footnotes" Target="footnotes.xml"/>`;
  if (islands) rels += islands.relationship;
  for (const r of body.relationships) {
    rels += `<Relationship Id="${r.id}" Type="${REL}/${r.type}" Target="${xmlAttr(r.target)}"${r.external ? ' TargetMode="External"' : ''}/>`;
  }
  rels += '</Relationships>';

  const exts = new Map<string, string>();
  for (const m of body.media) exts.set(m.extension, m.contentType);
  const contentTypes =
    `${XML_DECL}<Types xmlns="${CONTENT_TYPES_NS}">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    [...exts].map(([e, t]) => `<Default Extension="${e}" ContentType="${t}"/>`).join('') +
    `<Override PartName="/word/document.xml" ContentType="${WML}.document.main+xml"/>` +
    `<Override PartName="/word/styles.xml" ContentType="${WML}.styles+xml"/>` +
    `<Override PartName="/word/numbering.xml" ContentType="${WML}.numbering+xml"/>` +
    `<Override PartName="/word/settings.xml" ContentType="${WML}.settings+xml"/>` +
    `<Override PartName="/word/footnotes.xml" ContentType="${WML}.footnotes+xml"/>` +
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>' +
    '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>' +
    (islands?.contentType ?? '') +
    '</Types>';
  const rootRels =
    `${XML_DECL}<Relationships xmlns="${PACKAGE_RELS_NS}">` +
    `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/>` +
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>' +
    `<Relationship Id="rId3" Type="${REL}/extended-properties" Target="docProps/app.xml"/>` +
    '</Relationships>';
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const core =
    `${XML_DECL}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    (body.title ? `<dc:title>${xmlText(body.title)}</dc:title>` : '') +
    `<dc:creator>Folio</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">${now}</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">${now}</dcterms:modified></cp:coreProperties>`;
  const app = `${XML_DECL}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Folio</Application></Properties>`;

  const xml = (name: string, text: string): ZipWriteEntry => ({ name, data: Buffer.from(text, 'utf8'), store: false });
  const files: ZipWriteEntry[] = [
    xml('[Content_Types].xml', contentTypes),
    xml('_rels/.rels', rootRels),
    xml('docProps/core.xml', core),
    xml('docProps/app.xml', app),
    { name: 'word/document.xml', data: document, store: false },
    xml('word/styles.xml', DOC_STYLES_XML),
    xml('word/numbering.xml', numbering),
    xml('word/settings.xml', SETTINGS_XML),
    xml('word/footnotes.xml', footnotesPartXml(body.footnotes)),
    xml('word/_rels/document.xml.rels', rels),
    ...(islands?.parts.map((p) => xml(p.name, p.text)) ?? []),
  ];
  // Images are compressed already: stored as they are.
  for (const m of body.media) files.push({ name: m.path, data: m.bytes, store: true });
  return writeZip(files);
}
