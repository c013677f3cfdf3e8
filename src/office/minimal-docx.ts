/** A smallest valid DOCX with one paragraph: the workers' warm-up document (and a test fixture). */
import { CONTENT_TYPES_NS, NS, PACKAGE_RELS_NS, REL_TYPE, WML_CONTENT_TYPE } from '../docx/namespaces.js';
import { writeZip } from '../docx/zip-writer.js';

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const utf8 = (s: string) => Buffer.from(s, 'utf8');

export function minimalDocx(text: string): Uint8Array {
  return writeZip([
    {
      name: '[Content_Types].xml',
      data: utf8(
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="${CONTENT_TYPES_NS}">` +
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          `<Override PartName="/word/document.xml" ContentType="${WML_CONTENT_TYPE}.document.main+xml"/></Types>`,
      ),
    },
    {
      name: '_rels/.rels',
      data: utf8(
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="${PACKAGE_RELS_NS}">` +
          `<Relationship Id="rId1" Type="${REL_TYPE}/officeDocument" Target="word/document.xml"/></Relationships>`,
      ),
    },
    {
      name: 'word/document.xml',
      data: utf8(
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${NS.w}"><w:body><w:p><w:r><w:t>${escapeXml(text)}</w:t></w:r></w:p></w:body></w:document>`,
      ),
    },
  ]);
}
