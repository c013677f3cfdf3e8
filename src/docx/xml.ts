/**
 * A small, lossless XML tree for WordprocessingML parts, shared by annotate (fields and fills) and office
 * (tracked changes and comments). Both edit parts in place (move runs, clone rows, unwrap revisions), so they need a mutable tree that writes back every byte it did not touch: attribute
 * values and text stay in their escaped form, comments and processing instructions are kept verbatim.
 *
 * Safety: a DOCTYPE or ENTITY declaration anywhere is refused before parsing (no entity is ever expanded;
 * only the five predefined entities and character references are decoded, and only where we read text),
 * and nesting is bounded so that recursive walks cannot overflow the stack.
 */
import { FolioError } from '../errors.js';
import { assertNoDoctype } from './package.js';

export interface XElement {
  type: 'el';
  name: string;
  /** [qualified name, escaped value] in document order. */
  attrs: Array<[string, string]>;
  children: XNode[];
  parent: XElement | undefined;
}

export interface XText {
  type: 'text';
  /** Escaped character data as it appears in the file (may hold &amp; etc.). */
  raw: string;
}

/** Comments, processing instructions, CDATA, the XML declaration: written back verbatim. */
export interface XRaw {
  type: 'raw';
  raw: string;
}

export type XNode = XElement | XText | XRaw;

export interface XDocument {
  /** Whatever precedes the root element (declaration, comments). */
  prolog: string;
  root: XElement;
  epilog: string;
}

/** Deeper element nesting than this is refused: real documents stay far below it. */
export const MAX_XML_DEPTH = 512;
/**
 * Elements per parse: each costs a few hundred bytes of heap, so this bounds a tree near 400 MB. A dense
 * 16 MB body (the largest part annotate parses) holds well under a million.
 */
export const MAX_XML_ELEMENTS = 1_500_000;
/** Attributes on one element: WordprocessingML roots carry a few dozen namespace declarations at most. */
export const MAX_XML_ATTRIBUTES = 1_000;

/** Elements of all the parts of one document parsed together. */
export const MAX_DOCUMENT_ELEMENTS = 2_500_000;

/** Elements left for a whole document (shared by the parses of its parts); see MAX_DOCUMENT_ELEMENTS. */
export interface ParseBudget {
  elements: number;
}

const ATTR_RE = /([^\s=/>]+)\s*=\s*("([^"]*)"|'([^']*)')/g;

/** JavaScript's `\s`, tested on a char code: the fast path below must split exactly where ATTR_RE and `[\s]` do (read/parse.ts splits with it too). */
export function isSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Attributes of the start tag xml[from, to) (after its name), scanned in place. Hand-written because this is
 * the hot loop of reading a large part: ATTR_RE's match arrays and the substrings around them were a large
 * share of the allocation (and so of the GC time) of a 15 MB document.xml. It accepts only the well-formed
 * sequence `name = "value"` separated by whitespace, where it gives what ATTR_RE gives; anything else goes to
 * parseAttrs (ATTR_RE), so odd input is read exactly as before.
 */
function scanAttrs(xml: string, from: number, to: number, part: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let p = from;
  for (;;) {
    while (p < to && isSpace(xml.charCodeAt(p))) p++;
    if (p >= to) return out;
    const nameStart = p;
    for (; p < to; p++) {
      const c = xml.charCodeAt(p);
      if (c === 0x3d /* = */ || c === 0x2f /* / */ || c === 0x3e /* > */ || isSpace(c)) break;
    }
    if (p === nameStart) return parseAttrs(xml.slice(from, to), part);
    const nameEnd = p;
    while (p < to && isSpace(xml.charCodeAt(p))) p++;
    if (xml.charCodeAt(p) !== 0x3d || p >= to) return parseAttrs(xml.slice(from, to), part);
    p++;
    while (p < to && isSpace(xml.charCodeAt(p))) p++;
    const q = xml.charCodeAt(p);
    if (p >= to || (q !== 0x22 && q !== 0x27)) return parseAttrs(xml.slice(from, to), part);
    const close = xml.indexOf(q === 0x22 ? '"' : "'", p + 1);
    if (close < 0 || close >= to) return parseAttrs(xml.slice(from, to), part);
    if (out.length >= MAX_XML_ATTRIBUTES) throw malformed(part, `has an element with more than ${MAX_XML_ATTRIBUTES} attributes`);
    const raw = xml.slice(p + 1, close);
    // Single-quoted values are normalised to double quotes, so a literal " inside must be escaped.
    out.push([xml.slice(nameStart, nameEnd), q === 0x22 ? raw : raw.replace(/"/g, '&quot;')]);
    p = close + 1;
  }
}

function parseAttrs(src: string, part: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!/\S/.test(src)) return out;
  ATTR_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ATTR_RE.exec(src))) {
    if (out.length >= MAX_XML_ATTRIBUTES) throw malformed(part, `has an element with more than ${MAX_XML_ATTRIBUTES} attributes`);
    // Single-quoted values are normalised to double quotes, so a literal " inside must be escaped.
    const value = m[3] ?? (m[4] ?? '').replace(/"/g, '&quot;');
    out.push([m[1]!, value]);
  }
  if (out.length === 0 && /\S/.test(src)) throw malformed(part);
  return out;
}

function malformed(part: string, why = 'is not well-formed XML'): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The part ${part} ${why}`);
}

export function el(name: string, attrs: Array<[string, string]> = [], children: XNode[] = []): XElement {
  const e: XElement = { type: 'el', name, attrs, children, parent: undefined };
  for (const c of children) if (c.type === 'el') c.parent = e;
  return e;
}

/** Parses a whole part. Throws UNPROCESSABLE_DOCUMENT for DOCTYPE/ENTITY, malformed markup or excessive depth. */
export function parseXml(xml: string, part: string, budget?: ParseBudget): XDocument {
  assertNoDoctype(xml, part);
  const holder = el('#document');
  parseInto(holder, xml, part, budget);
  let root: XElement | undefined;
  let prolog = '';
  let epilog = '';
  for (const c of holder.children) {
    if (c.type === 'el') {
      if (root) throw malformed(part, 'has more than one root element');
      root = c;
    } else if (!root) prolog += c.raw;
    else epilog += c.raw;
  }
  if (!root) throw malformed(part, 'has no root element');
  root.parent = undefined;
  return { prolog, root, epilog };
}

/**
 * Parses a fragment: zero or more sibling nodes (written by us to build new content, or a part taken as a
 * sequence of nodes). `part` names it in error messages; the bounds are parseXml's.
 */
export function parseFragment(xml: string, part = 'fragment', budget?: ParseBudget): XNode[] {
  const holder = el('#fragment');
  parseInto(holder, xml, part, budget);
  for (const c of holder.children) if (c.type === 'el') c.parent = undefined;
  return holder.children;
}

function parseInto(holder: XElement, xml: string, part: string, budget?: ParseBudget): void {
  // Without a document budget, one parse may create at most MAX_XML_ELEMENTS elements.
  let left = Math.min(MAX_XML_ELEMENTS, budget?.elements ?? MAX_XML_ELEMENTS);
  const tooMany = () =>
    malformed(
      part,
      budget && budget.elements < MAX_XML_ELEMENTS
        ? `brings the document's parts beyond ${MAX_DOCUMENT_ELEMENTS} elements together`
        : `has more than ${MAX_XML_ELEMENTS} elements`,
    );
  // Start tags counted first (a '<' before a name character; comments and CDATA may over-count): an
  // element bomb is refused before a single node of it is built.
  let starts = 0;
  for (let k = xml.indexOf('<'); k >= 0; k = xml.indexOf('<', k + 1)) {
    const c = xml.charCodeAt(k + 1);
    if (c !== 0x2f && c !== 0x21 && c !== 0x3f && ++starts > left) throw tooMany();
  }
  const stack: XElement[] = [holder];
  let cur = holder;
  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      cur.children.push({ type: 'text', raw: xml.slice(i) });
      break;
    }
    if (lt > i) cur.children.push({ type: 'text', raw: xml.slice(i, lt) });
    const c1 = xml.charCodeAt(lt + 1);
    if (c1 === 0x2f /* / */) {
      const gt = xml.indexOf('>', lt);
      if (gt < 0) throw malformed(part);
      // Compared in place (the same as `xml.slice(lt + 2, gt).trim() === cur.name`, names hold no whitespace):
      // no string per closing tag.
      let p = lt + 2;
      while (p < gt && isSpace(xml.charCodeAt(p))) p++;
      let matches = stack.length > 1 && xml.startsWith(cur.name, p) && p + cur.name.length <= gt;
      for (let k = p + cur.name.length; matches && k < gt; k++) matches = isSpace(xml.charCodeAt(k));
      if (!matches)
        throw malformed(
          part,
          `has a mismatched closing tag </${xml
            .slice(lt + 2, gt)
            .trim()
            .slice(0, 40)}>`,
        );
      stack.pop();
      cur = stack[stack.length - 1]!;
      i = gt + 1;
      continue;
    }
    if (c1 === 0x21 /* ! */) {
      let end: number;
      if (xml.startsWith('<!--', lt)) end = xml.indexOf('-->', lt + 4) + 3;
      else if (xml.startsWith('<![CDATA[', lt)) end = xml.indexOf(']]>', lt + 9) + 3;
      else throw malformed(part, 'declares a DOCTYPE or entities, which are not allowed');
      if (end < 3) throw malformed(part);
      cur.children.push({ type: 'raw', raw: xml.slice(lt, end) });
      i = end;
      continue;
    }
    if (c1 === 0x3f /* ? */) {
      const end = xml.indexOf('?>', lt + 2);
      if (end < 0) throw malformed(part);
      cur.children.push({ type: 'raw', raw: xml.slice(lt, end + 2) });
      i = end + 2;
      continue;
    }
    // Start tag: find its end, skipping '>' inside quoted attribute values.
    let j = lt + 1;
    let quote = 0;
    for (; j < n; j++) {
      const c = xml.charCodeAt(j);
      if (quote) {
        if (c === quote) quote = 0;
      } else if (c === 0x22 || c === 0x27) quote = c;
      else if (c === 0x3e) break;
    }
    if (j >= n) throw malformed(part);
    const selfClosing = xml.charCodeAt(j - 1) === 0x2f;
    // The tag's inside is xml[lt + 1, end): its name up to the first whitespace, then its attributes.
    const end = selfClosing ? j - 1 : j;
    let sp = lt + 1;
    while (sp < end && !isSpace(xml.charCodeAt(sp))) sp++;
    if (sp === lt + 1) throw malformed(part);
    const name = xml.slice(lt + 1, sp);
    if (--left < 0) throw tooMany();
    const node: XElement = {
      type: 'el',
      name,
      attrs: sp >= end ? [] : scanAttrs(xml, sp, end, part),
      children: [],
      parent: cur === holder ? undefined : cur,
    };
    cur.children.push(node);
    if (!selfClosing) {
      stack.push(node);
      if (stack.length > MAX_XML_DEPTH) throw malformed(part, `nests elements deeper than ${MAX_XML_DEPTH} levels`);
      cur = node;
    }
    i = j + 1;
  }
  if (stack.length !== 1) throw malformed(part, 'ends before all its elements are closed');
  if (budget) budget.elements = Math.max(0, budget.elements - (Math.min(MAX_XML_ELEMENTS, budget.elements) - left));
  // Children of the holder get the real parent links; the holder itself is dropped by the callers.
  for (const c of holder.children) if (c.type === 'el') c.parent = holder;
}

export function serializeXml(doc: XDocument): string {
  const out: string[] = [doc.prolog];
  writeNode(doc.root, out);
  out.push(doc.epilog);
  return out.join('');
}

/**
 * The part as UTF-8 bytes, the same as Buffer.from(serializeXml(doc)), written in 64 KB chunks: a large
 * part (a table value of many thousands of rows) never exists as one array of millions of small strings and
 * one giant string besides its bytes.
 */
export function serializeXmlBytes(doc: XDocument): Uint8Array {
  const chunks: Buffer[] = [];
  let s = doc.prolog;
  const put = (piece: string) => {
    s += piece;
    // Never cut between the halves of a surrogate pair: each chunk must encode on its own.
    if (s.length >= 65_536 && !isHighSurrogate(s.charCodeAt(s.length - 1))) {
      chunks.push(Buffer.from(s, 'utf8'));
      s = '';
    }
  };
  const write = (node: XNode): void => {
    if (node.type !== 'el') return put(node.raw);
    let open = '<' + node.name;
    for (const [k, v] of node.attrs) open += ` ${k}="${v}"`;
    if (node.children.length === 0) return put(open + '/>');
    put(open + '>');
    for (const c of node.children) write(c);
    put(`</${node.name}>`);
  };
  write(doc.root);
  s += doc.epilog;
  chunks.push(Buffer.from(s, 'utf8'));
  const out = Buffer.concat(chunks);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

export function serializeNodes(nodes: XNode[]): string {
  const out: string[] = [];
  for (const n of nodes) writeNode(n, out);
  return out.join('');
}

function writeNode(node: XNode, out: string[]): void {
  if (node.type !== 'el') {
    out.push(node.raw);
    return;
  }
  let open = '<' + node.name;
  for (const [k, v] of node.attrs) open += ` ${k}="${v}"`;
  if (node.children.length === 0) {
    out.push(open + '/>');
    return;
  }
  out.push(open + '>');
  for (const c of node.children) writeNode(c, out);
  out.push(`</${node.name}>`);
}

// ---- text ---------------------------------------------------------------------------------------------

const ENTITY_RE = /&(?:(lt|gt|amp|quot|apos)|#(\d{1,7})|#x([0-9a-fA-F]{1,6}));/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeXml(raw: string): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(ENTITY_RE, (_m, named: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (named) return NAMED[named]!;
    const cp = dec ? parseInt(dec, 10) : parseInt(hex!, 16);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
  });
}

/**
 * Characters XML 1.0 cannot carry (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF) are
 * removed: a value must never make the part unreadable.
 */
const INVALID_XML_CHARS =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function stripInvalidXmlChars(s: string): string {
  return s.replace(INVALID_XML_CHARS, '');
}

export function escapeText(s: string): string {
  return stripInvalidXmlChars(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

// ---- tree helpers -------------------------------------------------------------------------------------

export function attr(e: XElement, name: string): string | undefined {
  for (const [k, v] of e.attrs) if (k === name) return decodeXml(v);
  return undefined;
}

export function setAttr(e: XElement, name: string, value: string): void {
  const escaped = escapeAttr(value);
  for (const a of e.attrs) {
    if (a[0] === name) {
      a[1] = escaped;
      return;
    }
  }
  e.attrs.push([name, escaped]);
}

export function child(e: XElement, name: string): XElement | undefined {
  for (const c of e.children) if (c.type === 'el' && c.name === name) return c;
  return undefined;
}

export function childElements(e: XElement, name?: string): XElement[] {
  const out: XElement[] = [];
  for (const c of e.children) if (c.type === 'el' && (name === undefined || c.name === name)) out.push(c);
  return out;
}

/** Depth-first, document order; `skip` prunes a subtree (the element itself is still visited). */
export function walk(root: XElement, visit: (e: XElement) => void | 'skip'): void {
  const stack: XElement[] = [root];
  while (stack.length) {
    const e = stack.pop()!;
    if (visit(e) === 'skip') continue;
    for (let i = e.children.length - 1; i >= 0; i--) {
      const c = e.children[i]!;
      if (c.type === 'el') stack.push(c);
    }
  }
}

export function descendants(root: XElement, name: string): XElement[] {
  const out: XElement[] = [];
  walk(root, (e) => {
    if (e !== root && e.name === name) out.push(e);
  });
  return out;
}

export function firstDescendant(root: XElement, name: string): XElement | undefined {
  let found: XElement | undefined;
  walk(root, (e) => {
    if (found) return 'skip';
    if (e !== root && e.name === name) {
      found = e;
      return 'skip';
    }
    return undefined;
  });
  return found;
}

export function ancestor(e: XElement, name: string): XElement | undefined {
  for (let p = e.parent; p; p = p.parent) if (p.name === name) return p;
  return undefined;
}

/** True when `e` is still inside `root` (an earlier fill may have replaced its container). */
export function isAttached(e: XElement, root: XElement): boolean {
  let p: XElement | undefined = e;
  while (p && p !== root) p = p.parent;
  return p === root;
}

export function setChildren(e: XElement, children: XNode[]): void {
  for (const c of e.children) if (c.type === 'el' && c.parent === e) c.parent = undefined;
  e.children = children;
  for (const c of children) if (c.type === 'el') c.parent = e;
}

export function appendChild(e: XElement, c: XNode): void {
  e.children.push(c);
  if (c.type === 'el') c.parent = e;
}

export function insertBefore(ref: XElement, nodes: XNode[]): void {
  const p = ref.parent!;
  const i = p.children.indexOf(ref);
  p.children.splice(i, 0, ...nodes);
  for (const c of nodes) if (c.type === 'el') c.parent = p;
}

export function insertAfter(ref: XElement, nodes: XNode[]): void {
  const p = ref.parent!;
  const i = p.children.indexOf(ref);
  p.children.splice(i + 1, 0, ...nodes);
  for (const c of nodes) if (c.type === 'el') c.parent = p;
}

export function remove(e: XElement): void {
  const p = e.parent;
  if (!p) return;
  const i = p.children.indexOf(e);
  if (i >= 0) p.children.splice(i, 1);
  e.parent = undefined;
}

/** Replaces `e` by `nodes` in its parent. */
export function replaceWith(e: XElement, nodes: XNode[]): void {
  const p = e.parent;
  if (!p) return;
  const i = p.children.indexOf(e);
  p.children.splice(i, 1, ...nodes);
  for (const c of nodes) if (c.type === 'el') c.parent = p;
  e.parent = undefined;
}

export function clone<T extends XNode>(node: T): T {
  if (node.type !== 'el') return { ...node };
  const e = node as XElement;
  const copy: XElement = { type: 'el', name: e.name, attrs: e.attrs.map(([k, v]) => [k, v]), children: [], parent: undefined };
  for (const c of e.children) {
    const cc = clone(c);
    if (cc.type === 'el') cc.parent = copy;
    copy.children.push(cc);
  }
  return copy as T;
}

/** Decoded text content of all descendant text nodes (for w:t, w:instrText and similar leaves). */
export function textContent(e: XElement): string {
  let s = '';
  for (const c of e.children) {
    if (c.type === 'text') s += decodeXml(c.raw);
    else if (c.type === 'el') s += textContent(c);
    else if (c.raw.startsWith('<![CDATA[')) s += c.raw.slice(9, -3);
  }
  return s;
}

export function setText(e: XElement, value: string): void {
  setChildren(e, value === '' ? [] : [{ type: 'text', raw: escapeText(value) }]);
}

/** Removes many elements with one pass per parent (removing them one by one is quadratic in a wide parent). */
export function removeAll(elements: Iterable<XElement>): void {
  const byParent = new Map<XElement, Set<XElement>>();
  for (const e of elements) {
    if (!e.parent) continue;
    let set = byParent.get(e.parent);
    if (!set) byParent.set(e.parent, (set = new Set()));
    set.add(e);
  }
  for (const [parent, set] of byParent) {
    parent.children = parent.children.filter((c) => !(c.type === 'el' && set.has(c)));
    for (const e of set) e.parent = undefined;
  }
}

/** Replaces every element named `name` under `root` by its `contentName` child's children, in one pass per parent. */
export function unwrapAll(root: XElement, name: string, contentName: string): number {
  let count = 0;
  const stack: XElement[] = [root];
  while (stack.length) {
    const e = stack.pop()!;
    if (e.children.some((c) => c.type === 'el' && c.name === name)) {
      const out: XNode[] = [];
      const expand = (nodes: XNode[]) => {
        for (const c of nodes) {
          if (c.type === 'el' && c.name === name) {
            count++;
            const content = child(c, contentName);
            if (content) expand(content.children);
          } else out.push(c);
        }
      };
      expand(e.children);
      setChildren(e, out);
    }
    for (const c of e.children) if (c.type === 'el') stack.push(c);
  }
  return count;
}
