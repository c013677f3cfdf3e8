/**
 * Accepting or rejecting every tracked change of a DOCX before LibreOffice sees it, on the lossless XML tree
 * (src/docx/xml.ts): what is not a revision mark is written back byte for byte.
 *
 * Why here and not with `.uno:AcceptAllTrackedChanges`: LibreOfficeKit's postUnoCommand dispatches to the
 * desktop's active frame, which in a headless worker that loads and destroys one document after another is
 * not reliably the document being converted (measured with 7.4: the command took effect on some
 * conversions only). Rewriting the WordprocessingML revision marks is deterministic and cheap.
 *
 * Handled: run-level insertions and deletions (w:ins, w:del, nested either way), moves (w:moveFrom,
 * w:moveTo and their range marks), inserted and deleted table rows (w:trPr/w:ins|w:del, nested tables
 * too), paragraph-mark and cell marks, and property changes (w:*PrChange: dropped on accept; on reject the
 * previous run properties are restored, other property changes keep the current formatting).
 */
import { child, parseFragment, serializeNodes, setChildren, type XElement, type XNode } from '../docx/xml.js';

export type RevisionMode = 'accept' | 'reject';

const PROPERTY_CHANGES = new Set([
  'w:rPrChange',
  'w:pPrChange',
  'w:sectPrChange',
  'w:tblPrChange',
  'w:trPrChange',
  'w:tcPrChange',
  'w:tblGridChange',
  'w:tblPrExChange',
  'w:numberingChange',
]);
const RANGE_MARKS = new Set([
  'w:moveFromRangeStart',
  'w:moveFromRangeEnd',
  'w:moveToRangeStart',
  'w:moveToRangeEnd',
  'w:cellIns',
  'w:cellDel',
  'w:cellMerge',
]);
const CONTENT_MARKS = new Set(['w:ins', 'w:del', 'w:moveFrom', 'w:moveTo']);
/** Elements whose content is text of a deletion: ordinary text again once the deletion is rejected. */
const DELETED_TEXT: Record<string, string> = { 'w:delText': 'w:t', 'w:delInstrText': 'w:instrText' };

/** Resolves the revisions of one WordprocessingML part (or fragment); returns the input itself when it has none. */
export function resolveRevisions(xml: string, mode: RevisionMode, part = 'fragment'): string {
  const nodes = parseFragment(xml, part);
  const holder: XElement = { type: 'el', name: '#fragment', attrs: [], children: [], parent: undefined };
  setChildren(holder, nodes);
  return resolveTree(holder, mode) ? serializeNodes(holder.children) : xml;
}

/** Resolves the revisions under `root` in place; true when anything changed. */
export function resolveTree(root: XElement, mode: RevisionMode): boolean {
  const [dropMarks, keepMarks] =
    mode === 'accept'
      ? [
          ['w:del', 'w:moveFrom'],
          ['w:ins', 'w:moveTo'],
        ]
      : [
          ['w:ins', 'w:moveTo'],
          ['w:del', 'w:moveFrom'],
        ];
  const rowMark = mode === 'accept' ? 'w:del' : 'w:ins';
  const drop = new Set(dropMarks);
  const keep = new Set(keepMarks);
  let changed = false;

  /** The children of `e` with revisions resolved (each child's subtree first, so nesting either way works). */
  const resolveChildren = (e: XElement): XNode[] | undefined => {
    let out: XNode[] | undefined;
    const kids = e.children;
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i]!;
      let replacement: XNode[] | undefined;
      if (c.type === 'el') replacement = resolveElement(c);
      if (replacement !== undefined) {
        changed = true;
        out ??= kids.slice(0, i);
      }
      if (out) out.push(...(replacement ?? [c]));
    }
    return out;
  };

  /** What `e` becomes: undefined when it stays (its subtree resolved in place), else its replacement nodes. */
  const resolveElement = (e: XElement): XNode[] | undefined => {
    const name = e.name;
    if (PROPERTY_CHANGES.has(name) || RANGE_MARKS.has(name)) return [];
    if (CONTENT_MARKS.has(name) && e.children.length === 0) return []; // a paragraph-mark or row mark
    if (drop.has(name)) return [];
    if (name === 'w:tr') {
      const trPr = child(e, 'w:trPr');
      if (trPr && child(trPr, rowMark)) return [];
    }
    if (name === 'w:rPr' && mode === 'reject') {
      const change = child(e, 'w:rPrChange');
      if (change) {
        // <w:rPr>current<w:rPrChange><w:rPr>old</w:rPr></w:rPrChange></w:rPr> → <w:rPr>old</w:rPr>.
        setChildren(e, child(change, 'w:rPr')?.children ?? []);
        changed = true;
      }
    }
    if (mode === 'reject' && DELETED_TEXT[name]) {
      e.name = DELETED_TEXT[name]!;
      changed = true;
    }
    const resolved = resolveChildren(e);
    if (resolved) setChildren(e, resolved);
    if (keep.has(name)) return e.children;
    return undefined;
  };

  // Recursive: the parser bounds the nesting (MAX_XML_DEPTH), so the stack is bounded too.
  const resolved = resolveChildren(root);
  if (resolved) setChildren(root, resolved);
  return changed;
}
