/**
 * Renders the API's OpenAPI document as TypeScript types: the single generated source of @folio/client's
 * request and answer types (packages/client/src/api-types.ts). test/foundation/openapi.test.ts regenerates
 * it from the live /openapi.json, formats it with the repository's Prettier, and fails when the committed file
 * differs (`UPDATE_API_TYPES=1` rewrites it).
 *
 * Why not openapi-typescript: it needs TypeScript 5's compiler API (peer typescript@^5), and this repository
 * builds with TypeScript 7, which has none. Why not let the client import the TypeBox modules: its declaration
 * build (rootDir src) would then reach into the server's tree and publish paths that do not exist for users.
 * Only what the schemas use is handled: objects, arrays, enums, consts, nullables, anyOf/oneOf, $ref, and
 * `format: binary` (the files of multipart forms).
 */

type Schema = Record<string, unknown>;

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Operation {
  operationId?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (k: string) => (IDENT.test(k) ? k : JSON.stringify(k));
const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function schemaToTs(schema: Schema | undefined, indent = ''): string {
  if (!schema || typeof schema !== 'object') return 'unknown';
  const ref = schema.$ref;
  if (typeof ref === 'string') return ref.replace(/^#\/components\/schemas\//, '');
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = schema[k];
    // A oneOf of bare `required` lists (exactly one of these properties) is handled with the object below.
    if (Array.isArray(alts) && !alts.every((a: Schema) => Object.keys(a).length === 1 && Array.isArray(a.required))) {
      return alts.map((a: Schema) => wrap(schemaToTs(a, indent))).join(' | ');
    }
  }
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => schemaToTs({ ...schema, type: t }, indent)).join(' | ');
  switch (type) {
    case 'string':
      // A file of a multipart form (BinaryField): what a browser or Node sends as a form part.
      return schema.format === 'binary' ? 'Blob' : 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${schemaToTs(schema.items as Schema, indent)}>`;
    case 'object':
      return objectToTs(schema, indent);
    default:
      return 'unknown';
  }
}

const wrap = (t: string) => (t.includes(' | ') && !t.startsWith('{') ? `(${t})` : t);

function objectToTs(schema: Schema, indent: string): string {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const inner = `${indent}  `;
  const body = (req: Set<string>) => {
    const lines = Object.entries(props).map(([k, v]) => `${inner}${key(k)}${req.has(k) ? '' : '?'}: ${schemaToTs(v, inner)};`);
    const extra = schema.additionalProperties ?? (schema.patternProperties ? Object.values(schema.patternProperties as object)[0] : undefined);
    if (extra === true || (extra && typeof extra === 'object')) {
      const valueType = extra === true || Object.keys(props).length > 0 ? 'unknown' : schemaToTs(extra as Schema, inner);
      lines.push(`${inner}[key: string]: ${valueType};`);
    }
    return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : 'Record<string, never>';
  };
  const oneOf = schema.oneOf as Schema[] | undefined;
  if (Array.isArray(oneOf) && oneOf.every((a) => Array.isArray(a.required))) {
    // Exactly one of: each variant requires its own and forbids the others.
    const names = oneOf.flatMap((a) => a.required as string[]);
    if (Object.keys(props).every((k) => names.includes(k))) {
      return oneOf
        .map((a) => {
          const own = a.required as string[];
          const fields = own.map((k) => `${key(k)}: ${schemaToTs(props[k], inner)}`);
          const others = names.filter((k) => !own.includes(k)).map((k) => `${key(k)}?: never`);
          return `{ ${[...fields, ...others].join('; ')} }`;
        })
        .join(' | ');
    }
    const variants = oneOf.map((a) => `{ ${(a.required as string[]).map((k) => `${key(k)}: ${schemaToTs(props[k], inner)}`).join('; ')} }`);
    const rest = new Set(required);
    return `(${variants.join(' | ')}) & ${body(rest)}`;
  }
  return body(required);
}

/**
 * The whole module: components, then per operation `<OperationId>Query`, `Request` (JSON), `Form` (multipart:
 * files as Blob, text fields as strings) and `Response`.
 */
export function openApiToTypeScript(doc: OpenApiDocument): string {
  const out: string[] = [
    '/**',
    " * Generated from the Folio API's OpenAPI document (src/http/openapi-types.ts) — do not edit by hand.",
    ' * Regenerate: UPDATE_API_TYPES=1 npx vitest run test/foundation/openapi.test.ts',
    ' */',
    '',
  ];
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    out.push(`export type ${name} = ${schemaToTs(schema)};`, '');
  }
  const ops: Array<[string, Operation]> = [];
  for (const methods of Object.values(doc.paths)) for (const op of Object.values(methods)) if (op.operationId) ops.push([op.operationId, op]);
  ops.sort(([a], [b]) => a.localeCompare(b));
  for (const [id, op] of ops) {
    const name = pascal(id);
    const query = (op.parameters ?? []).filter((p) => p.in === 'query');
    if (query.length) {
      const lines = query.map((p) => `  ${key(p.name)}${p.required ? '' : '?'}: ${schemaToTs(p.schema, '  ')};`);
      out.push(`export interface ${name}Query {\n${lines.join('\n')}\n}`, '');
    }
    const json = op.requestBody?.content?.['application/json']?.schema;
    if (json) out.push(`export type ${name}Request = ${schemaToTs(json)};`, '');
    const form = op.requestBody?.content?.['multipart/form-data']?.schema;
    if (form) out.push(`export type ${name}Form = ${schemaToTs(form)};`, '');
    const ok = op.responses?.['200']?.content?.['application/json']?.schema;
    if (ok) out.push(`export type ${name}Response = ${schemaToTs(ok)};`, '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
