/**
 * Removing Word comments before LibreOfficeKit loads a document, on the lossless XML tree (src/docx/xml.ts).
 *
 * LibreOffice 7.4's LOK build refuses to load any DOCX with comments ("loadComponentFromURL returned an
 * empty reference"; soffice converts the same files). The PDF export leaves comments out by default
 * (ExportNotes is off), so dropping them changes nothing visible: the comment anchors and reference runs
 * leave the body, and the comment parts lose their relationships and content types.
 */
import { ancestor, attr, parseFragment, removeAll, serializeNodes, walk, type XElement, type XNode } from '../docx/xml.js';

const COMMENT_RELATIONSHIP = /\/(comments|commentsExtended|commentsIds|commentsExtensible)$/;
const COMMENT_PART_NAME = /^\/word\/comments(Extended|Ids|Extensible)?\.xml$/i;

/** Whether a part name is one of the comment parts. */
export const isCommentPart = (name: string) => /^word\/comments(Extended|Ids|Extensible)?\.xml$/i.test(name);

/** Parses `xml`, removes the elements `doomed` picks under a holder, and writes it back (the input itself when none). */
function removeElements(xml: string, part: string, doomed: (e: XElement) => XElement | undefined): string {
  const holder: XElement = { type: 'el', name: '#fragment', attrs: [], children: [], parent: undefined };
  const nodes: XNode[] = parseFragment(xml, part);
  holder.children = nodes;
  for (const n of nodes) if (n.type === 'el') n.parent = holder;
  const found = new Set<XElement>();
  walk(holder, (e) => {
    const d = e === holder ? undefined : doomed(e);
    if (!d) return undefined;
    found.add(d);
    return 'skip';
  });
  if (found.size === 0) return xml;
  removeAll(found);
  return serializeNodes(holder.children);
}

/** Drops the comment range marks, the runs holding comment references, and any reference left outside a run. */
export function stripCommentMarks(xml: string, part = 'fragment'): string {
  return removeElements(xml, part, (e) => {
    if (e.name === 'w:commentRangeStart' || e.name === 'w:commentRangeEnd') return e;
    if (e.name === 'w:commentReference') return ancestor(e, 'w:r') ?? e;
    return undefined;
  });
}

/** Drops the relationships to the comment parts. */
export function stripCommentRelationships(relsXml: string, part = 'fragment'): string {
  return removeElements(relsXml, part, (e) => (e.name === 'Relationship' && COMMENT_RELATIONSHIP.test(attr(e, 'Type') ?? '') ? e : undefined));
}

/** Drops the content-type overrides of the comment parts. */
export function stripCommentContentTypes(typesXml: string, part = '[Content_Types].xml'): string {
  return removeElements(typesXml, part, (e) => (e.name === 'Override' && COMMENT_PART_NAME.test(attr(e, 'PartName') ?? '') ? e : undefined));
}
