/** POST /v1/annotate and POST /v1/annotate/fields (docs/api.md § Annotate): bodies, query and answers. */
import { BooleanString, DocumentSource, Nullable, ReturnedDocument, StringEnum, Type, type Static } from '../http/schema.js';
import { FIELD_TYPES } from './index.js';

const Size = Type.Unsafe<number | string>({
  anyOf: [
    { type: 'number', exclusiveMinimum: 0, maximum: 20000 },
    { type: 'string', pattern: '^\\s*\\d+(\\.\\d+)?\\s*(px)?\\s*$', maxLength: 20 },
  ],
});

const FieldOptions = Type.Object(
  {
    keepTextNodeStyles: Type.Optional(Type.Boolean({ default: true })),
    dimensions: Type.Optional(Type.Object({ width: Type.Optional(Size), height: Type.Optional(Size) }, { additionalProperties: false })),
    copyRowStyle: Type.Optional(Type.Boolean()),
    tableIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    flatten: Type.Optional(Type.Boolean()),
    format: Type.Optional(Type.String({ maxLength: 100 })),
    locale: Type.Optional(Type.String({ maxLength: 35 })),
    alt: Type.Optional(Type.String({ maxLength: 1000 })),
    arcElement: Type.Optional(Type.Object({}, { additionalProperties: true })),
    topLabel: Type.Optional(Type.Object({}, { additionalProperties: true })),
    bottomLabel: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

export const AnnotateFieldSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: "Matches the control's w:id, then its w:tag (or JSON fieldId), then its w:alias; and {{id}} placeholders",
      }),
    ),
    group: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Matches every control whose JSON w:tag has this group' })),
    type: StringEnum(FIELD_TYPES),
    value: Type.Unknown({
      description:
        'text/html: string; image/signature: data URI, base64 or http(s) URL (signature: or a name, typed); table: string[][]; checkbox: boolean; date: ISO 8601 date; link: {url, text}',
    }),
    options: Type.Optional(FieldOptions),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of id and group.',
    ...({ oneOf: [{ required: ['id'] }, { required: ['group'] }] } as object),
  },
);

export const AnnotateQuery = Type.Object(
  {
    to: Type.Optional(StringEnum(['docx', 'pdf'] as const, { default: 'docx' })),
    strict: Type.Optional(BooleanString('A request field that matches nothing is a 422')),
    flatten: Type.Optional(BooleanString('Replace every content control by its content')),
  },
  { additionalProperties: false },
);
export type AnnotateQueryString = Static<typeof AnnotateQuery>;

export const AnnotateRequest = Type.Object(
  {
    document: DocumentSource,
    fields: Type.Array(AnnotateFieldSchema, { maxItems: 5000 }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        document: { url: 'https://example.org/offer-template.docx' },
        fields: [
          { id: 'customer', type: 'text', value: 'Ada Lovelace' },
          { id: 'accepted', type: 'checkbox', value: true },
          { group: 'items', type: 'table', value: [['Widget', '2', '10.00']], options: { copyRowStyle: true } },
        ],
      },
    ],
  },
);
export type AnnotateRequestBody = Static<typeof AnnotateRequest>;

export const AnnotateResponse = Type.Object(
  {
    document: ReturnedDocument,
    report: Type.Object({
      filled: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), occurrences: Type.Integer() })),
      unmatched: Type.Array(Type.String(), { description: 'ids/groups of the request found nowhere in the template' }),
      unfilled: Type.Array(Type.String(), { description: 'Template fields left without a value' }),
      warnings: Type.Optional(Type.Array(Type.String())),
    }),
  },
  { description: 'The filled document and the report' },
);
export type AnnotateResponseBody = Static<typeof AnnotateResponse>;

export const FieldsRequest = Type.Object({ document: DocumentSource }, { additionalProperties: false });
export type FieldsRequestBody = Static<typeof FieldsRequest>;

export const TemplateField = Type.Object({
  id: Nullable(Type.String()),
  tag: Nullable(Type.String()),
  alias: Nullable(Type.String()),
  group: Nullable(Type.String()),
  type: Type.String(),
  location: StringEnum(['body', 'header', 'footer', 'footnote', 'endnote'] as const),
  kind: Type.Optional(StringEnum(['control', 'placeholder'] as const)),
  control: Type.Optional(Type.String()),
  level: Type.Optional(Type.String()),
  part: Type.Optional(Type.String()),
  occurrences: Type.Optional(Type.Integer()),
});

export const FieldsResponse = Type.Object({ fields: Type.Array(TemplateField) }, { description: 'The fields' });
export type FieldsResponseBody = Static<typeof FieldsResponse>;
