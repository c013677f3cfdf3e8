/**
 * Issue 13: a client generated from the OpenAPI document with the standard tool, `openapi-typescript` (v7,
 * installed in tools/lint beside TypeScript 5.9, which it needs), type-checks against `@folio/client`.
 * The app's document (/openapi.json) goes through openapi-typescript's Node API; its `operations` are written
 * to a temporary folder beside a TypeScript file that, for every operation FolioClient calls, assigns what the
 * client sends to the generated request type (query, path, JSON body) and the generated answers (200, and the
 * error envelope) to what the client returns; tools/lint's `tsc --noEmit --strict` must accept it.
 * A control run on a copy of the document with one request type broken must be refused, naming that check.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';

const root = path.resolve(import.meta.dirname, '../..');
const LINT = path.join(root, 'tools/lint/node_modules');
const OPENAPI_TS = path.join(LINT, 'openapi-typescript/dist/index.mjs');
const TSC = path.join(LINT, 'typescript/bin/tsc');
const CLIENT = path.join(root, 'packages/client/src');
const available = fs.existsSync(OPENAPI_TS) && fs.existsSync(TSC);
if (!available) {
  console.warn(
    'tools/lint/node_modules has no openapi-typescript or TypeScript 5.9 (run `npm ci --prefix tools/lint`, as scripts/setup.sh does): the openapi-typescript client check is SKIPPED',
  );
}

/**
 * Each check is a function whose `return` assigns one side to the other, so a mismatch is a compile error at
 * that line naming both types. Requests: what FolioClient sends must be accepted by the generated type.
 * Answers: what the generated type allows must fit what FolioClient returns.
 */
const COMPAT = (client: string) => `
import type { components, operations } from './generated.js';
import type { DocumentSource, FolioApiError, FolioClient, MergeItem } from '${client}/index.js';

type Op = keyof operations;
type Query<O extends Op> = NonNullable<operations[O]['parameters']['query']>;
type PathParams<O extends Op> = NonNullable<operations[O]['parameters']['path']>;
type JsonBody<O extends Op> = NonNullable<operations[O]['requestBody']> extends { content: { 'application/json': infer T } } ? T : never;
type Answer<O extends Op, S extends keyof operations[O]['responses']> = operations[O]['responses'][S] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;
type Method = { [K in keyof FolioClient]: FolioClient[K] extends (...args: never[]) => unknown ? K : never }[keyof FolioClient];
type Arg<M extends Method, I extends number> = Parameters<FolioClient[M]>[I];
type Result<M extends Method> = Awaited<ReturnType<FolioClient[M]>>;

export const health = (r: Answer<'getHealth', 200>): Result<'health'> => r;
export const healthUnhealthy = (r: Answer<'getHealth', 503>): Result<'health'> => r;

export const registerQuery = (email: Arg<'register', 0>): Query<'register'> => ({ email });
export const register = (r: Answer<'register', 200>): Result<'register'> => r;

export const verifyEmailQuery = (email: Arg<'verifyEmail', 0>, code: Arg<'verifyEmail', 1>): Query<'verifyEmail'> => ({ email, code });
export const verifyEmail = (r: Answer<'verifyEmail', 200>): Result<'verifyEmail'> => r;

export const listKeys = (r: Answer<'listKeys', 200>): Result<'listKeys'> => r.keys;

export const revokeKeyPath = (keyId: Arg<'revokeKey', 0>): PathParams<'revokeKey'> => ({ keyId });

export const convertQuery = (o: NonNullable<Arg<'convert', 1>>): Query<'convertDocument'> => ({
  from: o.from,
  to: o.to,
  trackedChanges: o.trackedChanges,
  pdfa: o.pdfa,
  tagged: o.tagged === undefined ? undefined : (\`\${o.tagged}\` as const),
});
export const convertTypes = (t: keyof operations['convertDocument']['responses'][200]['content']): string => t;

export const annotateQuery = (o: NonNullable<Arg<'annotate', 2>>): Query<'annotateDocument'> => ({
  to: o.to,
  strict: o.strict === undefined ? undefined : (\`\${o.strict}\` as const),
});
export const annotateBody = (document: DocumentSource, fields: Arg<'annotate', 1>): JsonBody<'annotateDocument'> => ({ document, fields });
export const annotate = (r: Answer<'annotateDocument', 200>): Result<'annotate'> => r;

export const annotateFieldsBody = (document: DocumentSource): JsonBody<'listTemplateFields'> => ({ document });
export const annotateFields = (r: Answer<'listTemplateFields', 200>): Result<'annotateFields'> => r.fields;

export const signBody = (request: Arg<'sign', 0>, document: DocumentSource): JsonBody<'signDocument'> => ({ ...request, document });
export const sign = (r: Answer<'signDocument', 200>): Result<'sign'> => r;

export const verifyKey = (r: Answer<'getSigningKey', 200>): Result<'verifyKey'> => r;

export const verifyBody = (document: DocumentSource): JsonBody<'verifyDocument'> => ({ document });
export const verify = (r: Answer<'verifyDocument', 200>): Result<'verify'> => r;

// merge answers a PDF; its JSON form is checked: an input named by a MergeItem, and the options.
export const mergeDocument = (item: MergeItem, document: DocumentSource): JsonBody<'mergeDocuments'>['documents'][number] => ({
  ...document,
  fileName: item.fileName,
  title: item.title,
  labelPrefix: item.labelPrefix,
});
export const mergeOptions = (o: NonNullable<Arg<'merge', 1>>): NonNullable<JsonBody<'mergeDocuments'>['options']> => ({
  outline: o.outline,
  pageLabels: o.pageLabels,
  pdfa: o.pdfa,
});

// None of the generated types above is never (to which anything would assign): each must be a real type.
type Real<T> = [T] extends [never] ? false : true;
export const generatedTypesAreReal: true[] = [] as Array<
  | Real<Answer<'getHealth', 200>>
  | Real<Answer<'getHealth', 503>>
  | Real<Query<'register'>>
  | Real<Answer<'register', 200>>
  | Real<Query<'verifyEmail'>>
  | Real<Answer<'verifyEmail', 200>>
  | Real<Answer<'listKeys', 200>>
  | Real<PathParams<'revokeKey'>>
  | Real<Query<'convertDocument'>>
  | Real<Query<'annotateDocument'>>
  | Real<JsonBody<'annotateDocument'>>
  | Real<Answer<'annotateDocument', 200>>
  | Real<JsonBody<'listTemplateFields'>>
  | Real<Answer<'listTemplateFields', 200>>
  | Real<JsonBody<'signDocument'>>
  | Real<Answer<'signDocument', 200>>
  | Real<Answer<'getSigningKey', 200>>
  | Real<JsonBody<'verifyDocument'>>
  | Real<Answer<'verifyDocument', 200>>
  | Real<JsonBody<'mergeDocuments'>>
>;

export const apiError = (status: number, e: components['schemas']['ErrorEnvelope']): ConstructorParameters<typeof FolioApiError> => [
  status,
  e.code,
  e.message,
  e.requestId,
  e.details,
];
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022', 'DOM'],
    types: [],
    skipLibCheck: true,
  },
  files: ['compat.ts'],
};

interface Checked {
  status: number | null;
  output: string;
  compat: string[];
}

/** Generates types from `doc` with openapi-typescript into a fresh folder beside the compatibility file, and runs tsc. */
async function check(doc: unknown, label: string): Promise<Checked> {
  const { default: openapiTS, astToString } = (await import(OPENAPI_TS)) as {
    default(schema: unknown): Promise<unknown>;
    astToString(ast: unknown): string;
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `folio-openapi-client-${label}-`));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'generated.ts'), astToString(await openapiTS(structuredClone(doc))));
  const compat = COMPAT(CLIENT);
  fs.writeFileSync(path.join(dir, 'compat.ts'), compat);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  const r = spawnSync(process.execPath, [TSC, '-p', path.join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`, compat: compat.split('\n') };
}

const dirs: string[] = [];
let api: TestApi;
let doc: {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>>;
};
beforeAll(async () => {
  if (!available) return;
  api = await startTestApi();
  const res = await fetch(`${api.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as typeof doc;
}, 60_000);
afterAll(async () => {
  await api?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!available)('a client generated with openapi-typescript', () => {
  it('type-checks (tools/lint TypeScript 5.9, --strict) against every request and answer of @folio/client', async () => {
    const r = await check(doc, 'ok');
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);

  it('is refused, naming the check, when the document no longer takes what the client sends', async () => {
    // The control: POST /v1/verify's `document` becomes an integer, which FolioClient.verify never sends.
    const broken = structuredClone(doc);
    broken.paths['/v1/verify']!.post!.requestBody!.content['application/json']!.schema.properties.document = { type: 'integer' };
    const r = await check(broken, 'broken');
    expect(r.status).not.toBe(0);
    const line = r.compat.findIndex((l) => l.startsWith('export const verifyBody')) + 1;
    expect(r.output).toMatch(new RegExp(`^compat\\.ts\\(${line},\\d+\\): error TS2322: .*not assignable to type 'number'`, 'm'));
    // Only that check fails.
    expect(r.output.match(/error TS/g)).toHaveLength(1);
  }, 120_000);
});
