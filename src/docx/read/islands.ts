/**
 * The Markdown of source islands (model.ts SOURCE_TAG) from the Custom XML Data part Folio's Markdown → DOCX
 * writer adds (src/convert/markdown-islands.ts). Loaded on the first `folio-md:` tag only, from the parts the
 * main document relates as customXml whose root is `<islands xmlns="urn:folio:markdown-islands">`. Bounds:
 * each part is inflated within the package's part and total limits and parsed by the reader's parse (no
 * DOCTYPE, the document's element budget); a part with more islands than the main part has `folio-md:` tags
 * (counted over its bytes) is forged and ignored with a warning; one that does not parse refuses the
 * document as any malformed part does.
 *
 * Each island is given out once: Folio's writer names every island from one content control, so a second
 * control naming the same island is a forged or copied package, and writing the island again per control
 * would multiply its Markdown (one 1 MB island named by 400 controls: 400 MB from a 5 KB file). The later
 * controls are read as their content, as an edited control is, with a warning.
 */
import type { DocxPackage } from '../package.js';
import { attr, childElements, textContent, type XElement } from '../xml.js';
import { ISLANDS_NS, SOURCE_TAG } from './model.js';

/** Looks up an island's Markdown by id, once per id (then undefined); the part is read on the first call. */
export function islandLoader(
  pkg: DocxPackage,
  mainPart: string,
  customXmlParts: string[],
  parse: (part: string) => XElement | undefined,
  warn: (message: string) => void,
): (id: string) => string | undefined {
  let sources: Map<string, string> | undefined;
  const given = new Set<string>();
  return (id) => {
    sources ??= load(pkg, mainPart, customXmlParts, parse, warn);
    const source = sources.get(id);
    if (source === undefined) return undefined;
    if (given.has(id)) {
      warn('a kept Markdown block (source island) is named by more than one content control; it is written once, the other places as their content');
      return undefined;
    }
    given.add(id);
    return source;
  };
}

function load(
  pkg: DocxPackage,
  mainPart: string,
  customXmlParts: string[],
  parse: (part: string) => XElement | undefined,
  warn: (message: string) => void,
): Map<string, string> {
  const out = new Map<string, string>();
  const tag = Buffer.from(SOURCE_TAG, 'utf8');
  const main = Buffer.from(pkg.get(mainPart) ?? new Uint8Array());
  let tags = 0;
  for (let i = main.indexOf(tag); i >= 0; i = main.indexOf(tag, i + tag.length)) tags++;
  for (const name of customXmlParts) {
    if (!pkg.has(name)) continue;
    // Only Folio's part is parsed: its namespace is in its first bytes (Word's own items, a bibliography, are not).
    const head = Buffer.from(pkg.get(name)!.subarray(0, 512)).toString('latin1');
    if (!head.includes(ISLANDS_NS)) continue;
    // Parsed as every part is: a DOCTYPE, malformed XML or too many elements refuse the document.
    const root = parse(name);
    if (!root || root.name !== 'islands' || attr(root, 'xmlns') !== ISLANDS_NS) continue;
    const islands = childElements(root, 'island');
    if (islands.length > tags) {
      warn('the kept Markdown of the document (a custom XML part) names more blocks than the document has; the content is read instead');
      continue;
    }
    for (const el of islands) {
      const id = attr(el, 'id');
      if (id !== undefined && !out.has(id)) out.set(id, textContent(el));
    }
    break;
  }
  return out;
}
