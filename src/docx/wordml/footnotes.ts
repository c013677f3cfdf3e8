/**
 * Footnotes for footnotes.xml. Word has no shared notes: every reference gets a copy of its note, so many
 * references to one long note would multiply its size without bound. Both the count and the total XML are
 * capped per document.
 */
import { FolioError } from '../../errors.js';
import { BODY_NAMESPACES, XML_DECL } from '../namespaces.js';

export const MAX_FOOTNOTES = 100_000;
export const MAX_FOOTNOTE_CHARS = 64_000_000;

const REFERENCE_MARK = '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> </w:t></w:r>';
const EMPTY_NOTE = '<w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr></w:p>';

export class Footnotes {
  /** <w:footnote> elements (user footnotes only; the separators are the package's). */
  readonly notes: string[] = [];
  private chars = 0;

  constructor(private next: number) {}

  /** The next note's w:id, taken before its content is written (notes inside it number after it). */
  reserve(): number {
    return this.next++;
  }

  /** Adds note `id` made of these body blocks (paragraphs, tables). */
  add(id: number, blocks: string[]): void {
    if (!blocks.length) blocks.push(EMPTY_NOTE);
    // The note's own number (the reference mark) opens its first paragraph, after that paragraph's properties.
    blocks[0] = blocks[0]!.replace(/^(<w:p>(?:<w:pPr>.*?<\/w:pPr>)?)/, `$1${REFERENCE_MARK}`);
    const note = `<w:footnote w:id="${id}">${blocks.join('')}</w:footnote>`;
    this.chars += note.length;
    if (this.chars > MAX_FOOTNOTE_CHARS || this.notes.length >= MAX_FOOTNOTES) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The document's footnotes are too large to convert (more than ${MAX_FOOTNOTES.toLocaleString('en')} footnote references or ${MAX_FOOTNOTE_CHARS / 1_000_000} MB of footnote text)`,
      );
    }
    this.notes.push(note);
  }
}

/** The reference in the body text, as run content (the run carries rStyle FootnoteReference). */
export function footnoteReferenceXml(id: number): string {
  return `<w:footnoteReference w:id="${id}"/>`;
}

/** The separator notes (ids -1 and 0) every footnotes.xml starts with. */
const SEPARATORS =
  '<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:footnote>' +
  '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>';

/** footnotes.xml: the separators, then these notes; the root declares every prefix a note's markup can use. */
export function footnotesPartXml(notes: readonly string[]): string {
  return `${XML_DECL}<w:footnotes ${BODY_NAMESPACES}>${SEPARATORS}${notes.join('')}</w:footnotes>`;
}
