/**
 * Removing Word comments before LibreOfficeKit loads a document.
 *
 * LibreOffice 7.4's LOK build refuses to load any DOCX with comments ("loadComponentFromURL returned an
 * empty reference"; soffice converts the same files). The PDF export leaves comments out by default
 * (ExportNotes is off), so dropping them changes nothing visible: the comment anchors and reference runs
 * leave the body, and the comment parts lose their relationships.
 */
const COMMENT_RELATIONSHIP = /<Relationship\b[^>]*Type="[^"]*\/(comments|commentsExtended|commentsIds|commentsExtensible)"[^>]*\/>/g;

/** Whether a part name is one of the comment parts. */
export const isCommentPart = (name: string) => /^word\/comments(Extended|Ids|Extensible)?\.xml$/i.test(name);

export function stripCommentMarks(xml: string): string {
  return xml
    .replace(/<w:commentRange(Start|End)(?=[\s/])[^>]*\/>/g, '')
    .replace(/<w:r(?=[\s>])[^>]*>(?:(?!<\/w:r>)[\s\S])*?<w:commentReference(?=[\s/])[^>]*\/>(?:(?!<\/w:r>)[\s\S])*?<\/w:r>/g, '')
    .replace(/<w:commentReference(?=[\s/])[^>]*\/>/g, '');
}

export function stripCommentRelationships(relsXml: string): string {
  return relsXml.replace(COMMENT_RELATIONSHIP, '');
}
