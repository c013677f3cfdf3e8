/**
 * POST /v1/convert (CONTRACT §3): the options, accepted as query parameters or as multipart form fields
 * next to `file` (the same schema validates both), and the upload itself.
 */
import { BooleanString, FileUpload, StringEnum, Type, type Static } from '../http/schema.js';

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

/** The option names, in the order the query string and the form fields are checked. */
export const CONVERT_OPTION_NAMES = Object.keys(ConvertOptions.properties) as Array<keyof ConvertOptionsQuery>;

/** The multipart body as the OpenAPI document describes it: `file` plus the options as form fields. */
export const ConvertForm = Type.Object(
  { ...FileUpload.properties, ...ConvertOptions.properties },
  {
    required: ['file'],
    description: 'The document in `file`; the options may also be sent as form fields (a value that conflicts with the query string is a 400)',
  },
);
