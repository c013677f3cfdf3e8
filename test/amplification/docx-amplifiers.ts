/**
 * DOCX packages whose text output is far larger than the package (issue 23), built in code: one picture
 * referenced from many places (every reference would write the picture's bytes again as a data URI), and one
 * source island (src/docx/read/islands.ts) named by many content controls (every control would write the
 * island's Markdown again). Shared by the engine-level test (test/convert/output-budget.test.ts), the
 * server-level amplification suite and the before/after measurement (bench).
 */
import crypto from 'node:crypto';
import { sourceFingerprint } from '../../src/docx/read/model.js';
import { DOC_CLOSE, DOC_OPEN, docxShell } from '../adversarial/generators.js';
import { buildZip, entry, type RawEntry } from '../adversarial/zip.js';

const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const WP = 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const PIC = 'http://schemas.openxmlformats.org/drawingml/2006/picture';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** The package parts around word/document.xml, with the main part's relationships replaced by `rels`. */
function shell(rels: string): RawEntry[] {
  return docxShell().map((e) =>
    e.name === 'word/_rels/document.xml.rels'
      ? entry(e.name, `${XML_DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels}</Relationships>`)
      : e,
  );
}

/** One inline DrawingML picture showing relationship `rId` (what Word writes for an inserted picture). */
function drawing(rId: string, n: number): string {
  return (
    `<w:r><w:drawing><wp:inline xmlns:wp="${WP}"><wp:extent cx="952500" cy="952500"/><wp:docPr id="${n}" name="Picture ${n}" descr="logo"/>` +
    `<a:graphic xmlns:a="${A}"><a:graphicData uri="${PIC}"><pic:pic xmlns:pic="${PIC}"><pic:blipFill><a:blip r:embed="${rId}"/></pic:blipFill></pic:pic>` +
    '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>'
  );
}

export interface RepeatedPicture {
  /** Bytes of the one picture (random, so it does not compress: the package is about this size). */
  imageBytes: number;
  /** How many times the document shows it. */
  references: number;
  /** All references in one paragraph (one top-level block) instead of one paragraph each. */
  oneParagraph?: boolean;
  /** The picture's extension, which gives its kind (default png). */
  ext?: string;
}

/**
 * A DOCX whose one PNG part is shown `references` times. The probe: a ~1 MB picture, 380 references
 * (each reference costs the document ~400 bytes of XML, which compresses to a few).
 */
export function repeatedPictureDocx(o: RepeatedPicture): Buffer {
  // A signature then noise: the reader takes the kind from the signature (image-kind.ts) and never decodes pixels.
  const signature = o.ext === 'bmp' ? Buffer.from('424d', 'hex') : Buffer.from('89504e470d0a1a0a', 'hex');
  const png = Buffer.concat([signature, crypto.randomBytes(Math.max(0, o.imageBytes - signature.length))]);
  const refs = Array.from({ length: o.references }, (_, i) => drawing('rIdImg', i + 1));
  const body = o.oneParagraph ? `<w:p>${refs.join('')}</w:p>` : refs.map((r) => `<w:p>${r}</w:p>`).join('');
  return buildZip([
    ...shell(`<Relationship Id="rIdImg" Type="${REL}/image" Target="media/image1.${o.ext ?? 'png'}"/>`),
    entry('word/document.xml', DOC_OPEN + '<w:p><w:r><w:t>Pictures:</w:t></w:r></w:p>' + body + DOC_CLOSE),
    entry(`word/media/image1.${o.ext ?? 'png'}`, png),
  ]);
}

export interface RepeatedIsland {
  /** Characters of the island's Markdown (at most 1 MiB: a larger part compressing as well is refused as a bomb). */
  sourceChars: number;
  /** Content controls naming the island. */
  controls: number;
}

/** What each control shows (the island's fingerprint is of this text). */
export const ISLAND_SHOWN = 'shown';

/**
 * A DOCX whose islands part holds one island (`sourceChars` of Markdown, a repeated line) and whose body has
 * `controls` content controls all tagged with it (Folio's writer never does this: one control per island).
 * The probe: 5.7 KB → 419 MB of Markdown.
 */
export function repeatedIslandDocx(o: RepeatedIsland): Buffer {
  // No `<` or `&`: the part's XML is the source's size, so it stays under the 1 MiB a part this compressible may have.
  const line = 'Kept Markdown of one block, repeated.\n';
  const source = line.repeat(Math.ceil(o.sourceChars / line.length)).slice(0, o.sourceChars);
  const tag = `folio-md:1:${sourceFingerprint(ISLAND_SHOWN)}`;
  const control = `<w:sdt><w:sdtPr><w:tag w:val="${tag}"/></w:sdtPr><w:sdtContent><w:p><w:r><w:t>${ISLAND_SHOWN}</w:t></w:r></w:p></w:sdtContent></w:sdt>`;
  const islands = `${XML_DECL}<islands xmlns="urn:folio:markdown-islands"><island id="1">${source}</island></islands>`;
  return buildZip([
    ...shell(`<Relationship Id="rIdIslands" Type="${REL}/customXml" Target="../customXml/item1.xml"/>`),
    entry('word/document.xml', DOC_OPEN + '<w:p><w:r><w:t>Islands:</w:t></w:r></w:p>' + control.repeat(o.controls) + DOC_CLOSE),
    entry('customXml/item1.xml', islands),
  ]);
}
