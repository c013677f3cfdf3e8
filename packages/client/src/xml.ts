/**
 * The little XML handling the metadata parts need, without a DOM (Node has none): namespace prefixes are
 * looked up by URI rather than assumed, entities are decoded and encoded. The parts involved are small
 * property lists that Word and other writers produce in a regular shape.
 */
export const NS = {
  w15: 'http://schemas.microsoft.com/office/word/2012/wordml',
  dcterms: 'http://purl.org/dc/terms/',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
  customProps: 'http://schemas.openxmlformats.org/officeDocument/2006/custom-properties',
  vt: 'http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes',
  coreProps: 'http://schemas.openxmlformats.org/package/2006/metadata/core-properties',
  dc: 'http://purl.org/dc/elements/1.1/',
  contentTypes: 'http://schemas.openxmlformats.org/package/2006/content-types',
  relationships: 'http://schemas.openxmlformats.org/package/2006/relationships',
} as const;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Prefixes bound to `uri` anywhere in the part ('' for a default namespace). */
export function prefixesFor(xml: string, uri: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`xmlns(?::([A-Za-z_][\\w.-]*))?\\s*=\\s*(?:"${escapeRe(uri)}"|'${escapeRe(uri)}')`, 'g');
  for (let m = re.exec(xml); m; m = re.exec(xml)) out.push(m[1] ?? '');
  return out;
}

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
    }
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e]!;
  });
}

export function encodeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export const qname = (prefix: string, local: string) => (prefix ? `${prefix}:${local}` : local);

/** Value of attribute `name` (exact qualified name) in a start tag's text. */
export function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${escapeRe(name)}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return m ? decodeEntities(m[1] ?? m[2] ?? '') : undefined;
}

/** Every start (or empty) tag of the element `qualified`. */
export function startTags(xml: string, qualified: string): string[] {
  return xml.match(new RegExp(`<${escapeRe(qualified)}(?=[\\s/>])[^>]*>`, 'g')) ?? [];
}

/** Text content of the first `qualified` element that has text (no nested markup expected). */
export function elementText(xml: string, qualified: string): string | undefined {
  const m = new RegExp(`<${escapeRe(qualified)}(?=[\\s>])[^>]*>([^<]*)</${escapeRe(qualified)}\\s*>`).exec(xml);
  return m ? decodeEntities(m[1]!) : undefined;
}

/** The root element's start tag: the first tag that is not a declaration, comment or processing instruction. */
export function rootStartTag(xml: string): { tag: string; index: number; name: string } | undefined {
  const re = /<([A-Za-z_][\w.:-]*)(?=[\s/>])[^>]*>/g;
  const m = re.exec(xml);
  return m ? { tag: m[0], index: m.index, name: m[1]! } : undefined;
}

/** Inserts `markup` just before the root element's closing tag. */
export function appendToRoot(xml: string, markup: string): string {
  const root = rootStartTag(xml);
  if (!root) throw new Error('no root element');
  if (root.tag.endsWith('/>')) {
    // <Properties .../>: open it up.
    const open = root.tag.slice(0, -2).trimEnd() + '>';
    return xml.slice(0, root.index) + open + markup + `</${root.name}>` + xml.slice(root.index + root.tag.length);
  }
  const close = xml.lastIndexOf(`</${root.name}`);
  if (close < 0) throw new Error('root element is not closed');
  return xml.slice(0, close) + markup + xml.slice(close);
}

/** Adds `xmlns:prefix="uri"` to the root start tag. */
export function declareOnRoot(xml: string, prefix: string, uri: string): string {
  const root = rootStartTag(xml);
  if (!root) throw new Error('no root element');
  const end = root.tag.endsWith('/>') ? root.tag.length - 2 : root.tag.length - 1;
  const tag = root.tag.slice(0, end) + ` xmlns:${prefix}="${uri}"` + root.tag.slice(end);
  return xml.slice(0, root.index) + tag + xml.slice(root.index + root.tag.length);
}

/** A prefix bound to `uri`, declaring `preferred` on the root when there is none. */
export function ensurePrefix(xml: string, uri: string, preferred: string): { xml: string; prefix: string } {
  const existing = prefixesFor(xml, uri).find((p) => p !== '');
  if (existing) return { xml, prefix: existing };
  let prefix = preferred;
  for (let i = 1; new RegExp(`xmlns:${escapeRe(prefix)}\\s*=`).test(xml); i++) prefix = `${preferred}${i}`;
  return { xml: declareOnRoot(xml, prefix, uri), prefix };
}
