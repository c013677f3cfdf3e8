/**
 * POST /v1/convert (docs/api.md § Convert): the options, accepted as query parameters or as multipart form fields
 * next to `file` (the same property schemas validate both), the form itself, and the checks no schema can
 * express (which options go with which target), in one place.
 */
import { FolioError, type ErrorDetail } from '../errors.js';
import { BinaryField, BooleanString, StringEnum, Type, type Static } from '../http/schema.js';

export const ConvertOptions = Type.Object(
  {
    from: Type.Optional(
      StringEnum(['docx', 'md', 'html', 'pdf'] as const, {
        description: 'Source format; inferred from the file name and content when absent (`pdf` only for `to=png|jpeg`)',
      }),
    ),
    to: Type.Optional(
      StringEnum(['pdf', 'docx', 'md', 'html', 'png', 'jpeg'] as const, {
        default: 'pdf',
        description:
          'Target format; `md` (CommonMark + GFM) and `html` (one self-contained HTML5 file) from a DOCX; `png`/`jpeg` are page previews of a DOCX or PDF (one image, or a ZIP of `page-<n>.<ext>` for several pages)',
      }),
    ),
    width: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,9}$',
        description: 'Previews (`to=png|jpeg`): image width in pixels, 1–4000 (default 800); the height keeps the page proportions',
        examples: ['800'],
      }),
    ),
    pages: Type.Optional(
      Type.String({
        pattern: '^[0-9, -]{1,400}$',
        description:
          'Previews (`to=png|jpeg`): pages to render, numbered from 1: a list of numbers and ranges such as `1-3,5` (default `1`; at most 50 pages per call; a page beyond the document is a 422)',
        examples: ['1-3,5'],
      }),
    ),
    trackedChanges: Type.Optional(
      StringEnum(['markup', 'accept', 'reject'] as const, {
        default: 'markup',
        description: 'DOCX→PDF: show tracked changes as markup, or accept/reject them first',
      }),
    ),
    pdfa: Type.Optional(StringEnum(['1b', '2b', '3b'] as const, { description: 'PDF/A conformance level of a PDF answer' })),
    tagged: Type.Optional(BooleanString('Tagged (accessible) PDF')),
    comments: Type.Optional(
      StringEnum(['none', 'margin', 'annotations'] as const, {
        default: 'none',
        description:
          'DOCX→PDF: Word comments left out (`none`), printed beside the text in a column added to the right of each page (`margin`, as Word prints markup), or kept as PDF comment annotations (`annotations`, not with `pdfa`; converted by a separate LibreOffice process, several seconds slower)',
      }),
    ),
    images: Type.Optional(
      StringEnum(['inline', 'drop'] as const, {
        default: 'inline',
        description: 'DOCX→md|html: pictures as data URIs (`inline`) or left out, keeping their alt text, with a warning (`drop`)',
      }),
    ),
    pageSize: Type.Optional(StringEnum(['A4', 'Letter'] as const, { default: 'A4', description: 'Page size of a DOCX built from Markdown or HTML' })),
  },
  { additionalProperties: false },
);
export type ConvertOptionsQuery = Static<typeof ConvertOptions>;

/** The option names, in the order the query string and the form fields are settled. */
export const CONVERT_OPTION_NAMES = Object.keys(ConvertOptions.properties) as Array<keyof ConvertOptionsQuery>;

/** The multipart body: `file` plus the options as form fields, validated by one compiled schema (src/http/multipart-form.ts). */
export const ConvertForm = Type.Object(
  { file: BinaryField({ description: 'The document (exactly one)' }), ...ConvertOptions.properties },
  {
    additionalProperties: false,
    description: 'The document in `file`; the options may also be sent as form fields (a value that conflicts with the query string is a 400)',
  },
);
export type ConvertFormBody = Static<typeof ConvertForm>;

/**
 * The options as sent, each validated by its schema already: the query string's (`query`, defaults not
 * counted: only names in `rawQuery`) merged with the form's (`sentInForm`). A name sent both ways with
 * different values is a 400 naming it.
 */
export function settleConvertOptions(
  rawQuery: string,
  query: ConvertOptionsQuery,
  form: ConvertOptionsQuery,
  sentInForm: ReadonlySet<string>,
): ConvertOptionsQuery {
  const sentInQuery = new URLSearchParams(rawQuery);
  const out: Record<string, string> = {};
  const details: ErrorDetail[] = [];
  for (const name of CONVERT_OPTION_NAMES) {
    const q = sentInQuery.has(name) ? query[name] : undefined;
    const f = sentInForm.has(name) ? form[name] : undefined;
    if (q !== undefined && f !== undefined && q !== f) {
      details.push({ field: name, issue: `the query string says "${q}" and the form field "${f}"` });
      continue;
    }
    const value = f ?? q;
    if (value !== undefined) out[name] = value;
  }
  if (details.length > 0) {
    throw new FolioError('VALIDATION_ERROR', `Invalid conversion options: ${details.map((d) => d.field).join(', ')}`, { details });
  }
  return out as ConvertOptionsQuery;
}

/**
 * What the schema cannot express: which options go with which target. Previews (`to=png|jpeg`) have their
 * own (src/preview `parsePreviewOptions`); for every other target `width` and `pages` are refused,
 * `comments=annotations` cannot be PDF/A, a PDF is a source for previews only, and `images` is for
 * DOCX→md|html.
 */
export function checkConvertOptions(q: ConvertOptionsQuery): void {
  const to = q.to ?? 'pdf';
  if (to === 'png' || to === 'jpeg') return;
  if (q.width !== undefined || q.pages !== undefined) {
    throw new FolioError('VALIDATION_ERROR', '`width` and `pages` apply to page previews only (to=png|jpeg)', {
      details: [{ field: q.width !== undefined ? 'width' : 'pages', issue: 'only with to=png or to=jpeg' }],
    });
  }
  if (q.comments === 'annotations' && q.pdfa) {
    // PDF/A forbids annotations without appearance streams, which LibreOffice's comment annotations are.
    throw new FolioError('VALIDATION_ERROR', '`comments=annotations` cannot be combined with `pdfa`; use `comments=margin`', {
      details: [{ field: 'comments', issue: 'annotations are not allowed in PDF/A output' }],
    });
  }
  if (q.from === 'pdf') {
    throw new FolioError('UNSUPPORTED_CONVERSION', `Conversion from pdf to ${to} is not supported`, {
      details: [{ field: 'from', issue: 'a PDF source is for page previews only (to=png|jpeg)' }],
    });
  }
  if (q.images !== undefined && to !== 'md' && to !== 'html') {
    throw new FolioError('VALIDATION_ERROR', '`images` applies to DOCX→Markdown/HTML only (to=md|html)', {
      details: [{ field: 'images', issue: 'only with to=md or to=html' }],
    });
  }
}
