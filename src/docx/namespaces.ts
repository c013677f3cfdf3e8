/**
 * The OOXML names every DOCX writer needs: the XML declaration, namespace URIs, relationship types and
 * content types. One place, so convert (new packages), annotate (templates it adds parts to) and office
 * (the warm-up document) cannot spell them differently.
 */
export const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** Namespace URI per prefix, for the prefixes Folio's markup uses. */
export const NS = {
  w: 'http://schemas.openxmlformats.org/wordprocessingml/2006/main',
  r: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  wp: 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing',
  a: 'http://schemas.openxmlformats.org/drawingml/2006/main',
  pic: 'http://schemas.openxmlformats.org/drawingml/2006/picture',
  w14: 'http://schemas.microsoft.com/office/word/2010/wordml',
  m: 'http://schemas.openxmlformats.org/officeDocument/2006/math',
} as const;

/** Relationship types are `${REL_TYPE}/styles`, `${REL_TYPE}/numbering`, `${REL_TYPE}/image` …. */
export const REL_TYPE = NS.r;
/** The namespace of a `.rels` part's root element. */
export const PACKAGE_RELS_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
/** The namespace of `[Content_Types].xml`. */
export const CONTENT_TYPES_NS = 'http://schemas.openxmlformats.org/package/2006/content-types';
/** WordprocessingML content types are `${WML_CONTENT_TYPE}.numbering+xml`, `.document.main+xml` …. */
export const WML_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml';

/** The namespace declarations of a part that holds body content (document, footnotes): text, links, pictures, equations. */
export const BODY_NAMESPACES = (['w', 'r', 'wp', 'a', 'pic', 'm'] as const).map((p) => `xmlns:${p}="${NS[p]}"`).join(' ');
