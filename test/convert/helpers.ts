import { unzipSync, strFromU8 } from 'fflate';
import { XMLValidator } from 'fast-xml-parser';

export interface Unpacked {
  files: Record<string, Uint8Array>;
  part(name: string): string;
  document: string;
}

/** Unzips a produced DOCX and checks every XML part is well-formed. */
export function unpack(docx: Uint8Array): Unpacked {
  const files = unzipSync(docx);
  for (const [name, bytes] of Object.entries(files)) {
    if (!name.endsWith('.xml') && !name.endsWith('.rels')) continue;
    const v = XMLValidator.validate(strFromU8(bytes));
    if (v !== true) throw new Error(`${name} is not well-formed: ${JSON.stringify(v)}`);
  }
  const part = (name: string) => {
    const b = files[name];
    if (!b) throw new Error(`missing part ${name}`);
    return strFromU8(b);
  };
  return { files, part, document: part('word/document.xml') };
}

export function count(haystack: string, needle: string | RegExp): number {
  if (typeof needle === 'string') return haystack.split(needle).length - 1;
  return (haystack.match(new RegExp(needle.source, needle.flags.includes('g') ? needle.flags : needle.flags + 'g')) ?? []).length;
}

/** Paragraph XML strings of a document body, in order. */
export function paragraphs(xml: string): string[] {
  return xml.match(/<w:p>.*?<\/w:p>|<w:p\/>/g) ?? [];
}

/** Visible text of a fragment of WordprocessingML. */
export function textOf(xml: string): string {
  return [...xml.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)]
    .map((m) => m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'))
    .join('');
}

export const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
