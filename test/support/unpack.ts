/** Reading a produced DOCX back in tests (shared by test/annotate and test/convert). */
import { strFromU8, unzipSync } from 'fflate';
import { XMLValidator } from 'fast-xml-parser';

export interface Unpacked {
  files: Record<string, Uint8Array>;
  part(name: string): string;
  document: string;
}

/** Unzips a DOCX and checks that every XML part (.xml, .rels) is well-formed. */
export function unpack(docx: Uint8Array): Unpacked {
  const files = unzipSync(docx);
  for (const [name, bytes] of Object.entries(files)) {
    if (!/\.(xml|rels)$/.test(name)) continue;
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
