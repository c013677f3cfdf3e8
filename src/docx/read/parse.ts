/**
 * The read-only XML parse of the DOCX exporter (docx→md, docx→html): the same tree as parseXml (xml.ts), with
 * the same bounds and the same errors, built with less work, since the exporter reads the tree and never
 * writes it back:
 * - attributes are kept as the span of their start tag and split into [name, escaped value] pairs only when
 *   the reader asks for them (most elements' attributes, the rsid* of every paragraph and run, are never
 *   read); the span is checked while the tag is scanned, so a malformed or over-long attribute list is refused
 *   at parse time as parseXml refuses it;
 * - elements the exporter never looks at (UNREAD: layout, proofing and compatibility properties, such as
 *   w:szCs, w:tcBorders, w:lang, w:rsid, and their subtrees) are checked as parseXml checks them, counted
 *   against the same element budget, and left out of the tree, so they cost no heap and no garbage
 *   collection (test/docx/read-parse.test.ts checks that no reader names one);
 * - leaves share one frozen empty child list;
 * - element names are taken from a small cache instead of a new string per tag (Word repeats a few dozen);
 * - the DOCTYPE/ENTITY check looks only at '<!' and the start tags are counted (the element bound, checked
 *   before a node is built) only when the part is longer than the bound.
 *
 * Hand-written rather than a SAX library (saxes, htmlparser2): the readers consume xml.ts's node interface,
 * whose text and attribute values stay escaped (decodeXml decodes them where read); a library decodes as it
 * goes, and re-escaping to keep the interface would cost more than this scanner, which is xml.ts's own
 * scanner minus the lossless bookkeeping. test/docx/read-parse.test.ts checks that both give the same tree
 * (names, attributes, text, order) for every part of the corpus, and the same errors for malformed input.
 */
import { FolioError } from '../../errors.js';
import {
  MAX_DOCUMENT_ELEMENTS,
  MAX_XML_ATTRIBUTES,
  MAX_XML_DEPTH,
  MAX_XML_ELEMENTS,
  isSpace,
  parseXml,
  type ParseBudget,
  type XDocument,
  type XElement,
  type XNode,
} from '../xml.js';

/**
 * Elements (with everything inside them) the exporter's readers (blocks.ts, inlines.ts, styles.ts,
 * numbering.ts, reader.ts) never name nor walk into for anything: run and paragraph properties of layout,
 * proofing and compatibility, table geometry, style-sheet metadata. The most frequent names of the corpus's
 * document, styles and numbering parts that no reader looks at. A reader that starts reading one must take
 * it off this list (test/docx/read-parse.test.ts fails while a reader names one).
 */
export const UNREAD = new Set([
  'w:szCs',
  'w:bCs',
  'w:iCs',
  'w:lang',
  'w:kern',
  'w:noProof',
  'w:proofErr',
  'w:lastRenderedPageBreak',
  'w:bookmarkEnd',
  'w:rsid',
  'w:spacing',
  'w:adjustRightInd',
  'w:autoSpaceDE',
  'w:autoSpaceDN',
  'w:widowControl',
  'w:keepNext',
  'w:keepLines',
  'w:contextualSpacing',
  'w:snapToGrid',
  'w:textAlignment',
  'w:tabs',
  'w:tcBorders',
  'w:tcW',
  'w:tcMar',
  'w:vAlign',
  'w:hideMark',
  'w:trHeight',
  'w:tblW',
  'w:tblInd',
  'w:tblGrid',
  'w:tblLayout',
  'w:tblLook',
  'w:tblCellMar',
  'w:tblCellSpacing',
  'w:tblStylePr',
  'w:sectPr',
  'w:latentStyles',
  'w:uiPriority',
  'w:unhideWhenUsed',
  'w:semiHidden',
  'w:qFormat',
  'w:next',
  'w:link',
  'w:lvlJc',
  'w:nsid',
  'w:multiLevelType',
  'w:tmpl',
]);

// Local copies: a module-namespace binding read in the scanner's inner loop costs a call under some loaders.
const MAX_DEPTH = MAX_XML_DEPTH;
const MAX_ATTRIBUTES = MAX_XML_ATTRIBUTES;
const NO_CHILDREN: XNode[] = Object.freeze([]) as unknown as XNode[];

/** What the elements of one parse share: the part's text, and values memoised by source text (memoBySource). */
interface Source {
  readonly xml: string;
  memo: Map<(e: XElement) => unknown, Map<string, unknown>> | undefined;
}

/**
 * An element whose attributes are split on first use. `from`/`to` is the attribute span of its start tag,
 * already checked to be a well-formed `name = "value"` sequence (the shape parseXml's fast path reads); `end`
 * is where the element ends in the part (after its closing tag).
 */
class ReadElement implements XElement {
  declare readonly type: 'el';
  children: XNode[] = NO_CHILDREN;
  end = -1;
  private split: Array<[string, string]> | undefined;

  constructor(
    public name: string,
    public parent: XElement | undefined,
    readonly src: Source,
    private readonly from: number,
    private readonly to: number,
  ) {}

  get attrs(): Array<[string, string]> {
    return (this.split ??= this.from >= this.to ? [] : splitAttrs(this.src.xml, this.from, this.to));
  }

  set attrs(v: Array<[string, string]>) {
    this.split = v;
  }

  /** The element as it is written in the part, start tag to end tag. */
  sourceText(): string {
    return this.src.xml.slice(this.from - this.name.length - 1, this.end);
  }
}
(ReadElement.prototype as { type: string }).type = 'el';

/** Distinct sources memoised per function and part: beyond this, values are computed without memo. */
const MAX_MEMO = 4096;

/**
 * `compute(e)`, memoised on the element's source text within its part: elements written alike (Word repeats
 * the same run properties thousands of times) have equal subtrees, hence equal results. The result is shared
 * between those elements, so it must be treated as read-only. Elements not built by parseForRead are
 * computed each time.
 */
export function memoBySource<T>(e: XElement, compute: (e: XElement) => T): T {
  if (!(e instanceof ReadElement) || e.end < 0) return compute(e);
  const memo = (e.src.memo ??= new Map());
  let byText = memo.get(compute);
  if (!byText) memo.set(compute, (byText = new Map()));
  const key = e.sourceText();
  const hit = byText.get(key);
  if (hit !== undefined || byText.has(key)) return hit as T;
  const value = compute(e);
  if (byText.size < MAX_MEMO) byText.set(key, value);
  return value;
}

/** [name, escaped value] pairs of a span checked by scanStartTag (so no error path here). */
function splitAttrs(xml: string, from: number, to: number): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let p = from;
  for (;;) {
    while (p < to && isSpace(xml.charCodeAt(p))) p++;
    if (p >= to) return out;
    const nameStart = p;
    for (; p < to; p++) {
      const c = xml.charCodeAt(p);
      if (c === 0x3d || isSpace(c)) break;
    }
    const name = xml.slice(nameStart, p);
    while (xml.charCodeAt(p) !== 0x3d) p++;
    p++;
    while (isSpace(xml.charCodeAt(p))) p++;
    const q = xml.charCodeAt(p);
    const close = xml.indexOf(q === 0x22 ? '"' : "'", p + 1);
    const raw = xml.slice(p + 1, close);
    // Single-quoted values are normalised to double quotes, as parseXml does.
    out.push([name, q === 0x22 ? raw : raw.replace(/"/g, '&quot;')]);
    p = close + 1;
  }
}

/** Element names seen lately, by a hash of their length and two characters: one string per distinct name. */
const NAME_CACHE: Array<string | undefined> = new Array<string | undefined>(1024).fill(undefined);
/** Whether NAME_CACHE's name at the same index is in UNREAD. */
const UNREAD_CACHE: boolean[] = new Array<boolean>(1024).fill(false);

/** The cache index of the name xml[from, to), which nameAt has just returned. */
let lastName = 0;

function nameAt(xml: string, from: number, to: number): string {
  const len = to - from;
  const h = (len * 31 + xml.charCodeAt(to - 1) * 7 + (len > 2 ? xml.charCodeAt(from + 2) : 0)) & 1023;
  lastName = h;
  const hit = NAME_CACHE[h];
  if (hit !== undefined && hit.length === len && xml.startsWith(hit, from)) return hit;
  const name = xml.slice(from, to);
  // Long names are not kept: a slice of a long part keeps the whole part alive.
  NAME_CACHE[h] = len > 64 ? undefined : name;
  UNREAD_CACHE[h] = UNREAD.has(name);
  return name;
}

/** Whether the name nameAt returned last is in UNREAD. */
const lastUnread = (name: string) => (NAME_CACHE[lastName] === name ? UNREAD_CACHE[lastName]! : UNREAD.has(name));

function malformed(part: string, why = 'is not well-formed XML'): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The part ${part} ${why}`);
}

/**
 * Parses a whole part for reading. Same result, bounds and errors as parseXml (xml.ts); the elements'
 * attributes are split lazily. Anything the fast scanner does not take in one step (odd spacing, unquoted or
 * duplicated-quote attributes, names with slashes) is handed to parseXml, so odd input is read exactly as
 * before.
 */
export function parseForRead(xml: string, part: string, budget?: ParseBudget): XDocument {
  const limit = Math.min(MAX_XML_ELEMENTS, budget?.elements ?? MAX_XML_ELEMENTS);
  // The DOCTYPE/ENTITY refusal (assertNoDoctype: anywhere in the part, any case), then the count of start tags
  // (a '<' before a name character; comments and CDATA may over-count), so an element bomb is refused before a
  // single node of it is built. A part of at most `limit` characters cannot hold more than `limit` of them.
  for (let k = xml.indexOf('<!'); k >= 0; k = xml.indexOf('<!', k + 2)) {
    if (startsWithUpper(xml, k + 2, 'DOCTYPE') || startsWithUpper(xml, k + 2, 'ENTITY')) {
      throw malformed(part, 'declares a DOCTYPE or entities, which are not allowed');
    }
  }
  if (xml.length > limit) {
    let starts = 0;
    for (let k = xml.indexOf('<'); k >= 0; k = xml.indexOf('<', k + 1)) {
      const c = xml.charCodeAt(k + 1);
      if (c !== 0x2f && c !== 0x21 && c !== 0x3f) starts++;
    }
    if (starts > limit) {
      throw malformed(
        part,
        budget && budget.elements < MAX_XML_ELEMENTS
          ? `brings the document's parts beyond ${MAX_DOCUMENT_ELEMENTS} elements together`
          : `has more than ${MAX_XML_ELEMENTS} elements`,
      );
    }
  }
  const fast = parseFast(xml, part);
  // Not taken in one step: parseXml reads it (and refuses it with its own message if it must).
  if (!fast) return parseXml(xml, part, budget);
  if (budget) budget.elements = Math.max(0, budget.elements - fast.elements);
  return fast.doc;
}

/** `xml` holds `word` at `at`, in any case (ASCII letters only). */
function startsWithUpper(xml: string, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = xml.charCodeAt(at + i);
    if ((c >= 0x61 && c <= 0x7a ? c - 0x20 : c) !== word.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The tree, or undefined when the part needs parseXml (an unusual start tag, or an error: parseXml then gives
 * the error with its own message). Errors parseXml gives at the same point (depth, attribute count, a
 * mismatched closing tag) are thrown here directly, with parseXml's messages.
 */
function parseFast(xml: string, part: string): { doc: XDocument; elements: number } | undefined {
  const top: XNode[] = [];
  const src: Source = { xml, memo: undefined };
  const stack: ReadElement[] = [];
  /** Names of the open elements of an UNREAD subtree (checked, not built). */
  const unread: string[] = [];
  let cur: ReadElement | undefined;
  let elements = 0;
  let i = 0;
  const n = xml.length;
  const add = (node: XNode) => {
    if (!cur) top.push(node);
    else if (cur.children === NO_CHILDREN) cur.children = [node];
    else cur.children.push(node);
  };
  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      add({ type: 'text', raw: xml.slice(i) });
      break;
    }
    if (lt > i && unread.length === 0) add({ type: 'text', raw: xml.slice(i, lt) });
    const c1 = xml.charCodeAt(lt + 1);
    if (c1 === 0x2f /* / */) {
      const gt = xml.indexOf('>', lt);
      if (gt < 0 || !cur) return undefined;
      const open = unread.length ? unread[unread.length - 1]! : cur.name;
      let p = lt + 2;
      while (p < gt && isSpace(xml.charCodeAt(p))) p++;
      let matches = xml.startsWith(open, p) && p + open.length <= gt;
      for (let k = p + open.length; matches && k < gt; k++) matches = isSpace(xml.charCodeAt(k));
      if (!matches) return undefined;
      if (unread.length) unread.pop();
      else {
        cur.end = gt + 1;
        stack.pop();
        cur = stack[stack.length - 1];
      }
      i = gt + 1;
      continue;
    }
    if (c1 === 0x21 /* ! */) {
      let end: number;
      if (xml.startsWith('<!--', lt)) end = xml.indexOf('-->', lt + 4) + 3;
      else if (xml.startsWith('<![CDATA[', lt)) end = xml.indexOf(']]>', lt + 9) + 3;
      else return undefined;
      if (end < 3) return undefined;
      if (unread.length === 0) add({ type: 'raw', raw: xml.slice(lt, end) });
      i = end;
      continue;
    }
    if (c1 === 0x3f /* ? */) {
      const end = xml.indexOf('?>', lt + 2);
      if (end < 0) return undefined;
      if (unread.length === 0) add({ type: 'raw', raw: xml.slice(lt, end + 2) });
      i = end + 2;
      continue;
    }
    // Start tag: the name (up to whitespace, '/' or '>'), then `name="value"` pairs separated by whitespace,
    // then '>' or '/>'. Anything else (a quote or '/' in a name, an attribute without '=' or quotes, a '/' not
    // before '>') is left to parseXml.
    let p = lt + 1;
    for (; p < n; p++) {
      const c = xml.charCodeAt(p);
      if (c === 0x3e || c === 0x2f || isSpace(c)) break;
      if (c === 0x22 || c === 0x27) return undefined;
    }
    if (p === lt + 1 || p >= n) return undefined;
    const nameEnd = p;
    let count = 0;
    let selfClosing = false;
    let attrEnd: number;
    for (;;) {
      while (p < n && isSpace(xml.charCodeAt(p))) p++;
      const c = xml.charCodeAt(p);
      if (c === 0x3e /* > */) {
        attrEnd = p;
        break;
      }
      if (c === 0x2f /* / */) {
        if (xml.charCodeAt(p + 1) !== 0x3e) return undefined;
        selfClosing = true;
        attrEnd = p;
        p++;
        break;
      }
      if (p >= n) return undefined;
      // An attribute name: up to '=' or whitespace.
      const nameStart = p;
      for (; p < n; p++) {
        const d = xml.charCodeAt(p);
        if (d === 0x3d || d === 0x2f || d === 0x3e || d === 0x22 || d === 0x27 || d === 0x3c || isSpace(d)) break;
      }
      if (p === nameStart) return undefined;
      while (p < n && isSpace(xml.charCodeAt(p))) p++;
      if (xml.charCodeAt(p) !== 0x3d) return undefined;
      p++;
      while (p < n && isSpace(xml.charCodeAt(p))) p++;
      const q = xml.charCodeAt(p);
      if (q !== 0x22 && q !== 0x27) return undefined;
      const close = xml.indexOf(q === 0x22 ? '"' : "'", p + 1);
      if (close < 0) return undefined;
      if (++count > MAX_ATTRIBUTES) throw malformed(part, `has an element with more than ${MAX_XML_ATTRIBUTES} attributes`);
      p = close + 1;
    }
    elements++;
    i = p + 1;
    const name = nameAt(xml, lt + 1, nameEnd);
    // Inside an UNREAD element, or one itself (below the root: the root is always built): checked, not built.
    if (unread.length || (cur && lastUnread(name))) {
      if (!selfClosing) {
        unread.push(name);
        if (stack.length + unread.length >= MAX_DEPTH) throw malformed(part, `nests elements deeper than ${MAX_XML_DEPTH} levels`);
      }
      continue;
    }
    const node = new ReadElement(name, cur, src, nameEnd, count ? attrEnd : nameEnd);
    add(node);
    if (selfClosing) node.end = i;
    else {
      stack.push(node);
      // parseXml's stack holds the document too: it refuses the 512th open element.
      if (stack.length >= MAX_DEPTH) throw malformed(part, `nests elements deeper than ${MAX_XML_DEPTH} levels`);
      cur = node;
    }
  }
  if (stack.length !== 0) return undefined;
  let root: XElement | undefined;
  let prolog = '';
  let epilog = '';
  for (const c of top) {
    if (c.type === 'el') {
      if (root) return undefined;
      root = c;
    } else if (!root) prolog += c.raw;
    else epilog += c.raw;
  }
  if (!root) return undefined;
  return { doc: { prolog, root, epilog }, elements };
}
