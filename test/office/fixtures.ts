/** Generated DOCX fixtures whose expected rendering is known exactly. */
import { buildDocx, pageBreak, para } from './helpers.js';

const rev = (id: number) => `w:id="${id}" w:author="Reviewer" w:date="2024-01-01T00:00:00Z"`;

/** One paragraph with a tracked insertion and a tracked deletion. */
export const trackedChangesDocx = () =>
  buildDocx({
    body:
      `<w:p><w:r><w:t xml:space="preserve">Base KEEPWORD </w:t></w:r>` +
      `<w:ins ${rev(1)}><w:r><w:t xml:space="preserve">INSERTEDWORD </w:t></w:r></w:ins>` +
      `<w:del ${rev(2)}><w:r><w:delText xml:space="preserve">DELETEDWORD </w:delText></w:r></w:del>` +
      `<w:r><w:t>ending.</w:t></w:r></w:p>`,
  });

/** Four pages (explicit breaks) with a default header and footer. */
export const headerFooterDocx = () =>
  buildDocx({
    header: para('FOLIOHEADERMARK running head'),
    footer: para('FOLIOFOOTERMARK running foot'),
    body: [1, 2, 3, 4].map((n) => para(`Body of page BODYPAGE${n}`)).join(pageBreak),
  });

/** A 160-row table whose first row is marked as a repeating header (w:tblHeader). */
export const longTableDocx = (rows = 160) => {
  const cell = (t: string) => `<w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr>${para(t)}</w:tc>`;
  const header = `<w:tr><w:trPr><w:tblHeader/></w:trPr>${cell('HEADCOLA')}${cell('HEADCOLB')}</w:tr>`;
  const body = Array.from({ length: rows }, (_, i) => `<w:tr>${cell(`ROWCELL${i + 1}`)}${cell(`value ${i + 1}`)}</w:tr>`).join('');
  return buildDocx({
    body:
      para('A long table follows.') +
      `<w:tbl><w:tblPr><w:tblW w:w="8000" w:type="dxa"/><w:tblBorders><w:top w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/>` +
      `<w:insideH w:val="single" w:sz="4"/></w:tblBorders></w:tblPr><w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid>${header}${body}</w:tbl>` +
      para('After the table.'),
  });
};

/** A three-level numbered list: decimal "1.", lower letter "a)", lower roman "(i)". */
export const nestedListDocx = () => {
  const lvl = (ilvl: number, fmt: string, text: string) =>
    `<w:lvl w:ilvl="${ilvl}"><w:start w:val="1"/><w:numFmt w:val="${fmt}"/><w:lvlText w:val="${text}"/><w:lvlJc w:val="left"/>` +
    `<w:pPr><w:ind w:left="${720 * (ilvl + 1)}" w:hanging="360"/></w:pPr></w:lvl>`;
  const numbering =
    `<w:abstractNum w:abstractNumId="0">${lvl(0, 'decimal', '%1.')}${lvl(1, 'lowerLetter', '%2)')}${lvl(2, 'lowerRoman', '(%3)')}</w:abstractNum>` +
    `<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`;
  const item = (ilvl: number, text: string) => para(text, `<w:numPr><w:ilvl w:val="${ilvl}"/><w:numId w:val="1"/></w:numPr>`);
  return buildDocx({
    numbering,
    body: [item(0, 'Alpha'), item(1, 'Beta'), item(1, 'Gamma'), item(2, 'Delta'), item(2, 'Epsilon'), item(0, 'Zeta')].join(''),
  });
};

/** A picture linked (not embedded) to `url`: LibreOffice must not fetch it. */
export const externalImageDocx = (url: string) =>
  buildDocx({
    rels: [
      `<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${url}" TargetMode="External"/>`,
    ],
    body:
      para('Before the linked picture.') +
      `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Linked"/>` +
      `<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="Linked"/><pic:cNvPicPr/></pic:nvPicPr>` +
      `<pic:blipFill><a:blip r:link="rIdImg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
      `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>` +
      `</wp:inline></w:drawing></w:r></w:p>` +
      // An INCLUDEPICTURE field pointing at the same server: the other way Word documents pull remote images.
      `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> INCLUDEPICTURE "${url}?field" \\d </w:instrText></w:r>` +
      `<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>field result</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>` +
      para('After the linked picture.'),
  });

/** A document large enough that its conversion takes a while (for timeout and kill tests). */
export const slowDocx = () => longTableDocx(6000);
