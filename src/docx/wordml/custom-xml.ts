/**
 * Custom XML Data parts (ECMA-376 Part 1 §22.5): an application's own XML stored in the package, as Word
 * stores them: `customXml/itemN.xml` (the data), `customXml/itemPropsN.xml` (a ds:datastoreItem naming it by
 * a GUID) tied to the data by `customXml/_rels/itemN.xml.rels` (customXmlProps), the data part named by a
 * relationship of type customXml from the main document part, and the properties part's content type.
 * Word keeps such parts when it saves a document, and the data has no length limit (unlike a content
 * control's tag). Used for the Markdown of source islands (src/convert/markdown-islands.ts).
 */
import { randomUUID } from 'node:crypto';
import { PACKAGE_RELS_NS, REL_TYPE, XML_DECL } from '../namespaces.js';

export const CUSTOM_XML_PROPS_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.customXmlProperties+xml';
const DATASTORE_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/customXml';

/** The parts of one custom XML item, the main part's relationship to it and its content-type override. */
export interface CustomXmlItem {
  parts: Array<{ name: string; text: string }>;
  /** A <Relationship> for the main document part's relationships (its target is relative to word/). */
  relationship: string;
  /** An <Override> for [Content_Types].xml (the data part itself is application/xml by the xml default). */
  contentType: string;
}

/**
 * Item `n` (1-based) holding `dataXml` (a complete XML document without declaration, whose root names
 * `schemaUri` as its namespace), related from the main part with relationship id `relId`.
 */
export function customXmlItem(n: number, dataXml: string, schemaUri: string, relId: string): CustomXmlItem {
  const guid = `{${randomUUID().toUpperCase()}}`;
  return {
    parts: [
      { name: `customXml/item${n}.xml`, text: XML_DECL + dataXml },
      {
        name: `customXml/itemProps${n}.xml`,
        text:
          XML_DECL +
          `<ds:datastoreItem ds:itemID="${guid}" xmlns:ds="${DATASTORE_NS}"><ds:schemaRefs><ds:schemaRef ds:uri="${schemaUri}"/></ds:schemaRefs></ds:datastoreItem>`,
      },
      {
        name: `customXml/_rels/item${n}.xml.rels`,
        text:
          XML_DECL +
          `<Relationships xmlns="${PACKAGE_RELS_NS}"><Relationship Id="rId1" Type="${REL_TYPE}/customXmlProps" Target="itemProps${n}.xml"/></Relationships>`,
      },
    ],
    relationship: `<Relationship Id="${relId}" Type="${REL_TYPE}/customXml" Target="../customXml/item${n}.xml"/>`,
    contentType: `<Override PartName="/customXml/itemProps${n}.xml" ContentType="${CUSTOM_XML_PROPS_CONTENT_TYPE}"/>`,
  };
}
