/**
 * POST /v1/merge (issue 17): the JSON body, the multipart form and their options, and the checks no schema
 * can express, in one place.
 */
import { FolioError } from '../errors.js';
import { MAX_DOCUMENT_BYTES } from '../fetch/document-source.js';
import { Base64Document, BinaryFiles, BooleanString, StringEnum, Type, type Static } from '../http/schema.js';

/** Fewest and most inputs of one merge. */
export const MIN_MERGE_INPUTS = 2;
export const MAX_MERGE_INPUTS = 50;
/** Most pages of the merged PDF. */
export const MAX_MERGE_PAGES = 10_000;
/**
 * Longest file name or title (in characters), multipart and JSON alike: a file system allows 255 bytes
 * per name, so no real upload is longer; a longer one would become an outline title as it came.
 */
export const MAX_FILE_NAME_LENGTH = 255;

const PDFA_DESCRIPTION =
  'Not supported: the merged file is written by Folio, not by the office engine, and is not PDF/A whatever the inputs are. ' +
  'Any value is refused with 400 UNSUPPORTED_CONVERSION; convert each DOCX with POST /v1/convert?pdfa=… instead.';

export const MergeOptions = Type.Object(
  {
    outline: Type.Optional(
      Type.Boolean({
        default: true,
        description: "One outline (bookmark) entry per input, named after its title or file name, with the input's own outline beneath it",
      }),
    ),
    pageLabels: Type.Optional(
      Type.Boolean({ default: true, description: 'Each input starts a new page-label range (1, 2, …, with its labelPrefix if given)' }),
    ),
    pdfa: Type.Optional(StringEnum(['1b', '2b', '3b'] as const, { description: PDFA_DESCRIPTION })),
  },
  { additionalProperties: false },
);
export type MergeOptionsBody = Static<typeof MergeOptions>;

export const MergeRequest = Type.Object(
  {
    documents: Type.Array(
      Type.Object(
        {
          base64: Type.Optional(Base64Document()),
          url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          fileName: Type.Optional(
            Type.String({ maxLength: MAX_FILE_NAME_LENGTH, description: 'Names the input in errors and, without a title, in the outline' }),
          ),
          title: Type.Optional(
            Type.String({ minLength: 1, maxLength: MAX_FILE_NAME_LENGTH, description: "The input's outline entry (default: its file name)" }),
          ),
          labelPrefix: Type.Optional(Type.String({ maxLength: 64, description: "Prefix of the input's page labels, e.g. `A-`" })),
        },
        {
          additionalProperties: false,
          description: 'A PDF or DOCX: exactly one of base64 (raw or data: URI) and url (http/https, fetched under SSRF rules)',
          oneOf: [{ required: ['base64'] }, { required: ['url'] }],
        },
      ),
      { minItems: MIN_MERGE_INPUTS, maxItems: MAX_MERGE_INPUTS, description: 'The inputs, in the order of the merged pages' },
    ),
    options: Type.Optional(MergeOptions),
  },
  {
    additionalProperties: false,
    examples: [
      {
        documents: [
          { url: 'https://example.org/cover.docx', title: 'Cover letter' },
          { base64: 'JVBERi0xLjcKJeLjz9MK…', fileName: 'contract.pdf' },
        ],
        options: { outline: true, pageLabels: true },
      },
    ],
  },
);
export type MergeRequestBody = Static<typeof MergeRequest>;

/** The multipart form: `files` repeated (2–50, in order, adding up to 25 MB at most) and the options as text fields. */
export const MergeForm = Type.Object(
  {
    files: BinaryFiles({
      minItems: MIN_MERGE_INPUTS,
      maxItems: MAX_MERGE_INPUTS,
      maxTotalBytes: MAX_DOCUMENT_BYTES,
      fileNameMaxLength: MAX_FILE_NAME_LENGTH,
      description:
        'The PDF and DOCX inputs (field repeated), in the order of the merged pages, adding up to 25 MB at most; their file names (at most 255 characters, as in JSON) name the outline entries',
    }),
    outline: Type.Optional(BooleanString('Default true: one outline entry per input, its own outline beneath it')),
    pageLabels: Type.Optional(BooleanString('Default true: each input starts a new page-label range')),
    pdfa: Type.Optional(StringEnum(['1b', '2b', '3b'] as const, { description: PDFA_DESCRIPTION })),
  },
  { additionalProperties: false },
);
export type MergeFormBody = Static<typeof MergeForm>;

const MB = 1024 * 1024;

/** The 413 for inputs that add up to more than 25 MB, multipart or JSON. */
export const mergeTooLarge = () =>
  new FolioError('FILE_TOO_LARGE', `The inputs of a merge add up to more than ${MAX_DOCUMENT_BYTES / MB} MB`, {
    details: [{ field: 'files', issue: `the sum of the inputs is limited to ${MAX_DOCUMENT_BYTES / MB} MB` }],
  });

/**
 * What the schemas cannot express, checked once the request is validated and before any input is fetched
 * or converted: `pdfa` is documented (so a client sees why) but refused with its own code.
 */
export function checkMergeOptions(options: { pdfa?: string } | undefined): void {
  if (options?.pdfa !== undefined) {
    throw new FolioError('UNSUPPORTED_CONVERSION', 'A merged PDF cannot be PDF/A: convert each DOCX with POST /v1/convert?pdfa=… instead', {
      details: [{ field: 'pdfa', issue: 'not supported by merge' }],
    });
  }
}
