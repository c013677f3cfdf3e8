/**
 * What the pool does to a validated DOCX before a worker sees it: accept or reject tracked changes
 * (revisions.ts) and drop comments (comments.ts), both on the lossless XML tree; with `comments=margin` the
 * comments are first turned into a column of frames beside the text (comments-margin.ts), with
 * `comments=annotations` they are kept for the soffice fallback (soffice.ts). Word's Symbol bullets become
 * U+2022 (bullets.ts), and Word's automatic line spacing the per cent LibreOffice reads nearest
 * (line-spacing.ts); fonts Word lacks become the alternative Word's font table records (alt-fonts.ts). A
 * markup-mode document without comments, Symbol bullets, such spacing or such fonts passes untouched.
 * Only the WordprocessingML parts are inflated; every other entry is copied as it was.
 */
import type { DocxPackage } from '../docx/package.js';
import { resolveRevisions } from './revisions.js';
import { isCommentPart, stripCommentContentTypes, stripCommentMarks, stripCommentRelationships } from './comments.js';
import { placeCommentsInMargin } from './comments-margin.js';
import { unicodeBullets } from './bullets.js';
import { wordLineSpacing } from './line-spacing.js';
import { useWordAlternatives, wordAlternatives } from './alt-fonts.js';
import { expandTextChunks } from '../docx/wordml/alt-chunks.js';
import type { DocxToPdfOptions } from './types.js';

const REVISION_HINT = /<w:(ins|del|moveFrom|moveTo|\w+PrChange|tblGridChange|numberingChange|cellIns|cellDel|cellMerge)[\s/>]/;

/**
 * The bytes to convert: the package's own when nothing changes, else the rewritten package. What the
 * preparation leaves out (comments the margin column cannot print) is added to `warnings`.
 */
export function prepareDocx(pkg: DocxPackage, options: DocxToPdfOptions, warnings: string[] = []): Uint8Array {
  const mode = options.trackedChanges ?? 'markup';
  const names = pkg.names();
  const commentsMode = options.comments ?? 'none';
  // Comments kept for the fallback are left exactly as they are; only the revisions are resolved.
  const hasComments = commentsMode !== 'annotations' && names.some(isCommentPart);
  const bullets = fixBullets(pkg, names);
  const lineSpacing = fixLineSpacing(pkg, names);
  const altFonts = useAltFonts(pkg, names);
  // HTML/RTF/text chunks LibreOffice leaves out become paragraphs of their text (src/docx/wordml/alt-chunks.ts).
  const chunks = expandTextChunks(pkg);
  if (mode === 'markup' && !hasComments) return bullets || lineSpacing || altFonts || chunks ? pkg.toBytes() : pkg.bytes;
  if (hasComments && commentsMode === 'margin') placeCommentsInMargin(pkg, warnings);
  for (const name of names) {
    if (hasComments && isCommentPart(name)) {
      pkg.delete(name);
      continue;
    }
    const isXml = /^word\/.*\.xml$/i.test(name);
    const isRels = /^word\/_rels\/.*\.rels$/i.test(name);
    if (!isXml && !isRels) continue;
    let xml = pkg.text(name);
    if (!xml) continue;
    const before = xml;
    if (isRels) {
      if (hasComments) xml = stripCommentRelationships(xml, name);
    } else {
      if (hasComments && xml.includes('comment')) xml = stripCommentMarks(xml, name);
      if (mode !== 'markup' && REVISION_HINT.test(xml)) xml = resolveRevisions(xml, mode, name);
    }
    if (xml !== before) pkg.setText(name, xml);
  }
  if (hasComments) {
    const types = pkg.text('[Content_Types].xml');
    if (types) {
      const stripped = stripCommentContentTypes(types);
      if (stripped !== types) pkg.setText('[Content_Types].xml', stripped);
    }
  }
  return pkg.modified ? pkg.toBytes() : pkg.bytes;
}

/** Moves automatic line spacing to the per cent LibreOffice rounds nearest (line-spacing.ts); whether a part changed. */
function fixLineSpacing(pkg: DocxPackage, names: string[]): boolean {
  let changed = false;
  for (const name of names) {
    if (!/^word\/[^/]*\.xml$/i.test(name)) continue;
    const xml = pkg.text(name);
    if (!xml || !xml.includes('w:line=')) continue;
    const fixed = wordLineSpacing(xml);
    if (fixed !== xml) {
      pkg.setText(name, fixed);
      changed = true;
    }
  }
  return changed;
}

/** Fonts Word lacks replaced by the alternative its font table records (alt-fonts.ts); whether a part changed. */
function useAltFonts(pkg: DocxPackage, names: string[]): boolean {
  const table = names.find((n) => /^word\/fontTable\.xml$/i.test(n));
  const xml = table ? pkg.text(table) : undefined;
  if (!xml || !xml.includes('w:altName')) return false;
  const alternatives = wordAlternatives(xml);
  let changed = false;
  for (const name of names) {
    if (!/^word\/[^/]*\.xml$/i.test(name) || name === table) continue;
    const part = pkg.text(name);
    if (!part) continue;
    const fixed = useWordAlternatives(part, alternatives);
    if (fixed !== part) {
      pkg.setText(name, fixed);
      changed = true;
    }
  }
  return changed;
}

/** Rewrites Word's Symbol-font bullets to U+2022 (bullets.ts); whether the numbering part changed. */
function fixBullets(pkg: DocxPackage, names: string[]): boolean {
  const part = names.find((n) => /^word\/numbering\.xml$/i.test(n));
  const xml = part ? pkg.text(part) : undefined;
  if (!part || !xml || !/\uF0B7|&#xF0B7;|&#61623;/i.test(xml)) return false;
  const fixed = unicodeBullets(xml);
  if (fixed === xml) return false;
  pkg.setText(part, fixed);
  return true;
}
