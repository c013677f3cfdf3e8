/**
 * The merge engine (no HTTP): PDFs in, one PDF out, on an engine thread. Each input is opened through
 * src/pdf's openForAuthoring (the bounded reader first, pdf-lib on the objects it read), then
 * its pages are copied with @cantoo/pdf-lib. The pages keep their order; the outline (one entry per input,
 * its own outline beneath) and the page labels (one range per input) are built as plain PDF dictionaries. DOCX inputs arrive already
 * converted by the office engine. Errors name the input by index and file name.
 */
import { OutputBudget } from '../budget/index.js';
import { FolioError, isFolioError, type ErrorDetail } from '../errors.js';
import { isPdf } from '../formats/sniff.js';
import {
  MAX_AUTHORING_OBJECTS,
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFRef,
  PDFString,
  ParseSpeeds,
  createDocument,
  decodePdfText,
  encodePdfText,
  openForAuthoring,
  saveWithin,
  type PDFContext,
  type PDFDocument,
  type PDFObject,
} from '../pdf/index.js';
import { copyAllPages, StreamIndex } from './copy-pages.js';
import { countPagesByPdfLib, countPagesByReader, objectCount, type PageCount } from './page-count.js';
import { MAX_MERGE_PAGES } from './schema.js';

export interface MergeInput {
  /** The PDF (a DOCX input is converted before the merge). */
  pdf: Uint8Array;
  /** As uploaded or given; names the input in errors and, without a title, in the outline. */
  fileName: string;
  title?: string;
  labelPrefix?: string;
  /** The input was a DOCX (for messages). */
  fromDocx?: boolean;
}

export interface MergeOptions {
  outline: boolean;
  pageLabels: boolean;
  /** Bytes the merged PDF may have (OUTPUT_MAX_MB); past it, 422 naming the limit. Unbounded when absent. */
  outputMaxBytes?: number;
}

export interface MergeResult {
  pdf: Uint8Array;
  pageCount: number;
  /** For the person reading the answer: signed inputs whose signatures did not survive, and the like. */
  warnings: string[];
}

/** Bounds on one input's own outline, copied beneath its entry. */
const MAX_OUTLINE_ITEMS_PER_INPUT = 5_000;
const MAX_OUTLINE_DEPTH = 32;
/** Bounds on the walks through form fields and name trees. */
const MAX_WALK_NODES = 20_000;

/** How an input is named in messages and error details: its index (from 0) and its file name. */
export const inputLabel = (index: number, fileName: string) => `input ${index}${fileName ? ` (${fileName})` : ''}`;

export function inputError(
  index: number,
  fileName: string,
  issue: string,
  code: 'UNPROCESSABLE_DOCUMENT' | 'INVALID_FILE_FORMAT' = 'UNPROCESSABLE_DOCUMENT',
) {
  const details: ErrorDetail[] = [{ field: `documents.${index}`, issue: `${fileName || 'unnamed'}: ${issue}` }];
  return new FolioError(code, `Cannot merge ${inputLabel(index, fileName)}: ${issue}`, { details });
}

/** Page-tree nodes one input's count may visit per page the merge still has room for (a binary tree needs 2). */
const VISITS_PER_PAGE = 3;

/** The 422 for a merge past MAX_MERGE_PAGES, naming the input that crosses it. */
function tooManyPages(index: number, fileName: string): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The merged document would have more than ${MAX_MERGE_PAGES} pages`, {
    details: [{ field: `documents.${index}`, issue: `${fileName || 'unnamed'}: pages beyond the ${MAX_MERGE_PAGES}-page limit` }],
  });
}

/** The answer for a count that refuses the input; the count itself otherwise (undefined: unknown). */
function judged(count: PageCount, index: number, fileName: string): number | undefined {
  switch (count.kind) {
    case 'over':
      throw tooManyPages(index, fileName);
    case 'bad':
      throw inputError(index, fileName, count.problem);
    case 'counted':
      return count.pages;
    default:
      return undefined;
  }
}

/**
 * Opens one input through src/pdf's openForAuthoring: the bounded reader reads it (its xref, object,
 * inflation and nesting bounds), and only the objects it read reach pdf-lib. A file with
 * more objects than the merge has room for pages (where resolving every object is the cost) has its pages counted by the reader first, only up to `room`, so a million-page file is refused
 * in milliseconds. Smaller files are counted on pdf-lib's parsed tree (countPagesByPdfLib), which is cheap.
 */
async function openInput(input: MergeInput, index: number, room: number): Promise<PDFDocument> {
  if (!isPdf(input.pdf)) throw inputError(index, input.fileName, 'not a PDF or DOCX file', 'INVALID_FILE_FORMAT');
  let doc: PDFDocument;
  try {
    ({ doc } = await openForAuthoring(input.pdf, {
      maxObjects: MAX_AUTHORING_OBJECTS,
      purpose: 'merging',
      // The merged document is new: a page given directly in /Kids may become an object of its own.
      numberDirectPages: true,
      inspect: (reader) => {
        if (objectCount(reader) > room) judged(countPagesByReader(reader, room, VISITS_PER_PAGE * room + 1_000), index, input.fileName);
      },
    }));
  } catch (e) {
    // The inspection's refusals already name the input; the PDF core's ("The PDF …") are given its name.
    if (isFolioError(e) && e.details) throw e;
    if (isFolioError(e) && e.code === 'UNPROCESSABLE_DOCUMENT') {
      throw inputError(index, input.fileName, e.message.replace(/^The PDF/, 'the PDF'));
    }
    throw e;
  }
  // Before pdf-lib's own walk, which has no bound: a small file of shared nodes can ask it for 10^9 visits.
  judged(countPagesByPdfLib(doc, room, VISITS_PER_PAGE * room + 1_000), index, input.fileName);
  let count: number;
  try {
    count = doc.getPageCount();
  } catch {
    throw inputError(index, input.fileName, 'the PDF has no readable page tree');
  }
  if (count === 0) throw inputError(index, input.fileName, 'the PDF has no pages');
  return doc;
}

/** True when the document's form holds a signature field with a value (a signature), or DocMDP permissions. */
function isSigned(doc: PDFDocument): boolean {
  const catalog = doc.catalog;
  if (catalog.lookupMaybe(PDFName.of('Perms'), PDFDict)) return true;
  const acroForm = catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
  const fields = acroForm?.lookupMaybe(PDFName.of('Fields'), PDFArray);
  if (!fields) return false;
  const stack: PDFObject[] = [...fields.asArray()];
  const seen = new Set<PDFObject>();
  let visited = 0;
  while (stack.length > 0 && visited++ < MAX_WALK_NODES) {
    const item = stack.pop()!;
    const field = item instanceof PDFRef ? doc.context.lookup(item) : item;
    if (!(field instanceof PDFDict) || seen.has(field)) continue;
    seen.add(field);
    const ft = field.lookup(PDFName.of('FT'));
    if (ft === PDFName.of('Sig') && field.get(PDFName.of('V')) !== undefined) return true;
    const kids = field.lookupMaybe(PDFName.of('Kids'), PDFArray);
    if (kids) stack.push(...kids.asArray());
  }
  return false;
}

function textOf(obj: PDFObject | undefined): string | undefined {
  if (obj instanceof PDFString || obj instanceof PDFHexString) return decodePdfText(obj.asBytes());
  return undefined;
}

/** A text string for the merged document, in src/pdf's one codec (PDFDocEncoding's ASCII, else UTF-16BE). */
const hexText = (text: string) => PDFHexString.of(Buffer.from(encodePdfText(text)).toString('hex'));

/** A named destination of `doc`: the catalog's /Dests dictionary (PDF 1.1) or the /Names /Dests name tree. */
function namedDestination(doc: PDFDocument, name: PDFObject): PDFObject | undefined {
  const unwrap = (v: PDFObject | undefined): PDFObject | undefined => {
    const d = v instanceof PDFRef ? doc.context.lookup(v) : v;
    return d instanceof PDFDict ? d.lookup(PDFName.of('D')) : d;
  };
  if (name instanceof PDFName) {
    const dests = doc.catalog.lookupMaybe(PDFName.of('Dests'), PDFDict);
    return unwrap(dests?.get(name));
  }
  const key = textOf(name);
  if (key === undefined) return undefined;
  const tree = doc.catalog.lookupMaybe(PDFName.of('Names'), PDFDict)?.lookupMaybe(PDFName.of('Dests'), PDFDict);
  const stack = tree ? [tree] : [];
  let visited = 0;
  while (stack.length > 0 && visited++ < MAX_WALK_NODES) {
    const node = stack.pop()!;
    const names = node.lookupMaybe(PDFName.of('Names'), PDFArray);
    if (names) {
      for (let i = 0; i + 1 < names.size(); i += 2) {
        if (textOf(names.lookup(i)) === key) return unwrap(names.get(i + 1));
      }
    }
    const kids = node.lookupMaybe(PDFName.of('Kids'), PDFArray);
    if (kids)
      for (let i = 0; i < kids.size(); i++) {
        const kid = kids.lookup(i);
        if (kid instanceof PDFDict) stack.push(kid);
      }
  }
  return undefined;
}

/** An outline item's destination in the merged document, or undefined when it does not point at a page of its input. */
function mappedDestination(src: PDFDocument, item: PDFDict, pageMap: Map<string, PDFRef>, out: PDFContext): PDFArray | undefined {
  let dest: PDFObject | undefined = item.lookup(PDFName.of('Dest'));
  if (dest === undefined) {
    const action = item.lookupMaybe(PDFName.of('A'), PDFDict);
    if (action && action.lookup(PDFName.of('S')) === PDFName.of('GoTo')) dest = action.lookup(PDFName.of('D'));
  }
  if (dest !== undefined && !(dest instanceof PDFArray)) dest = namedDestination(src, dest);
  if (!(dest instanceof PDFArray) || dest.size() === 0) return undefined;
  const target = dest.get(0);
  const page = target instanceof PDFRef ? pageMap.get(target.toString()) : undefined;
  if (!page) return undefined;
  const rest: PDFObject[] = [];
  for (let i = 1; i < dest.size(); i++) {
    const v = dest.lookup(i);
    if (v instanceof PDFName || v instanceof PDFNumber || v === PDFNull) rest.push(v);
    else return out.obj([page, PDFName.of('Fit')]);
  }
  return out.obj([page, ...(rest.length > 0 ? rest : [PDFName.of('Fit')])]);
}

interface OutlineNode {
  title: string;
  dest?: PDFArray;
  children: OutlineNode[];
}

/** The input's own outline, as a bounded tree of titles and destinations mapped into the merged document. */
function readOutline(src: PDFDocument, pageMap: Map<string, PDFRef>, out: PDFContext): OutlineNode[] {
  const root = src.catalog.lookupMaybe(PDFName.of('Outlines'), PDFDict);
  if (!root) return [];
  const seen = new Set<PDFDict>();
  let budget = MAX_OUTLINE_ITEMS_PER_INPUT;
  const walk = (parent: PDFDict, depth: number): OutlineNode[] => {
    const nodes: OutlineNode[] = [];
    if (depth > MAX_OUTLINE_DEPTH) return nodes;
    let item = parent.lookupMaybe(PDFName.of('First'), PDFDict);
    while (item && !seen.has(item) && budget-- > 0) {
      seen.add(item);
      nodes.push({
        title: textOf(item.lookup(PDFName.of('Title'))) ?? '',
        dest: mappedDestination(src, item, pageMap, out),
        children: walk(item, depth + 1),
      });
      item = item.lookupMaybe(PDFName.of('Next'), PDFDict);
    }
    return nodes;
  };
  try {
    return walk(root, 0);
  } catch {
    // A damaged outline is dropped, never the document.
    return [];
  }
}

/** Writes `nodes` as the children of the item `parentRef`; entries with children are written closed. */
function writeOutlineItems(ctx: PDFContext, parentRef: PDFRef, nodes: OutlineNode[]): { first: PDFRef; last: PDFRef } | undefined {
  if (nodes.length === 0) return undefined;
  const refs = nodes.map(() => ctx.nextRef());
  nodes.forEach((node, i) => {
    const dict = ctx.obj({}) as PDFDict;
    dict.set(PDFName.of('Title'), hexText(node.title));
    dict.set(PDFName.of('Parent'), parentRef);
    if (i > 0) dict.set(PDFName.of('Prev'), refs[i - 1]!);
    if (i < nodes.length - 1) dict.set(PDFName.of('Next'), refs[i + 1]!);
    if (node.dest) dict.set(PDFName.of('Dest'), node.dest);
    const kids = writeOutlineItems(ctx, refs[i]!, node.children);
    if (kids) {
      dict.set(PDFName.of('First'), kids.first);
      dict.set(PDFName.of('Last'), kids.last);
      dict.set(PDFName.of('Count'), PDFNumber.of(-node.children.length));
    }
    ctx.assign(refs[i]!, dict);
  });
  return { first: refs[0]!, last: refs[refs.length - 1]! };
}

/**
 * Drops the value (/V, the signature dictionary with its ByteRange and CMS) of every signature field that
 * the copied pages' widgets lead to: the signature covered the input's bytes and cannot be valid in the
 * merged file, so it is not carried over for a validator to report as a broken one. The widgets and their
 * appearance stay: the signature is merged as what it looks like.
 */
function dropSignatureValues(out: PDFDocument, pages: PDFRef[]): void {
  const ctx = out.context;
  for (const ref of pages) {
    const annots = ctx.lookupMaybe(ref, PDFDict)?.lookupMaybe(PDFName.of('Annots'), PDFArray);
    if (!annots) continue;
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookup(i);
      if (!(annot instanceof PDFDict)) continue;
      const parent = annot.lookupMaybe(PDFName.of('Parent'), PDFDict);
      for (const field of parent ? [annot, parent] : [annot]) {
        if (field.lookup(PDFName.of('FT')) !== PDFName.of('Sig')) continue;
        const value = field.get(PDFName.of('V'));
        field.delete(PDFName.of('V'));
        // Already copied as an object of its own: pdf-lib writes every object of the context, referenced or not.
        if (value instanceof PDFRef) ctx.delete(value);
      }
    }
  }
}

export async function mergePdfs(inputs: MergeInput[], options: MergeOptions): Promise<MergeResult> {
  const out = await createDocument();
  const ctx = out.context;
  const warnings: string[] = [];
  const entries: OutlineNode[] = [];
  const labelStarts: Array<{ start: number; prefix?: string }> = [];
  const streams = new StreamIndex();
  let pageCount = 0;

  for (const [index, input] of inputs.entries()) {
    const src = await openInput(input, index, MAX_MERGE_PAGES - pageCount);
    const count = src.getPageCount();
    if (pageCount + count > MAX_MERGE_PAGES) throw tooManyPages(index, input.fileName);
    const signed = isSigned(src);
    if (signed) {
      warnings.push(`${inputLabel(index, input.fileName)} is signed; it was merged as content and its signature is not valid in the merged PDF`);
    }
    let copied: PDFRef[];
    try {
      copied = copyAllPages(src, out, streams);
    } catch {
      throw inputError(index, input.fileName, 'its pages could not be read');
    }
    if (signed) dropSignatureValues(out, copied);
    const pageMap = new Map<string, PDFRef>();
    // A page object listed more than once: destinations go to its first occurrence.
    src.getPages().forEach((p, i) => pageMap.has(p.ref.toString()) || pageMap.set(p.ref.toString(), copied[i]!));
    const first = copied[0]!;
    if (options.outline) {
      const title = input.title ?? (input.fileName || `Document ${index + 1}`);
      entries.push({ title, dest: ctx.obj([first, PDFName.of('Fit')]), children: readOutline(src, pageMap, ctx) });
    }
    labelStarts.push({ start: pageCount, prefix: input.labelPrefix });
    pageCount += count;
  }

  if (options.outline && entries.length > 0) {
    const rootRef = ctx.nextRef();
    const items = writeOutlineItems(ctx, rootRef, entries)!;
    ctx.assign(rootRef, ctx.obj({ Type: 'Outlines', First: items.first, Last: items.last, Count: PDFNumber.of(entries.length) }));
    out.catalog.set(PDFName.of('Outlines'), rootRef);
    out.catalog.set(PDFName.of('PageMode'), PDFName.of('UseOutlines'));
  }
  if (options.pageLabels) {
    const nums: PDFObject[] = [];
    for (const { start, prefix } of labelStarts) {
      const label = ctx.obj({ S: 'D' }) as PDFDict;
      if (prefix) label.set(PDFName.of('P'), hexText(prefix));
      nums.push(PDFNumber.of(start), label);
    }
    out.catalog.set(PDFName.of('PageLabels'), ctx.register(ctx.obj({ Nums: ctx.obj(nums) })));
  }
  out.setProducer('Folio');
  const budget = new OutputBudget(options.outputMaxBytes ?? Number.MAX_SAFE_INTEGER, 'merged PDF');
  const pdf = await saveWithin(out, budget, ParseSpeeds.Fast);
  return { pdf, pageCount, warnings };
}
