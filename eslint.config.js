// ESLint flat config: typescript-eslint's recommended rules, the type-aware rules that catch bugs, and the layers
// of src/ (who may import whom). The packages live in tools/lint (own lock, own TypeScript 5.9 for the parser: see
// its package.json). Run with `npm run lint`; formatting is Prettier's job (.prettierrc.json), so no stylistic rules.
import { globals, js, layers, tseslint } from './tools/lint/index.js';

const root = import.meta.dirname;

/**
 * The layers of src/, lowest first: a file imports its own unit (a folder, or a file named here) and lower layers,
 * never a higher one (`folio/layers`, tools/lint/layers.js, also for `import()` and `import type`). Test:
 * test/lint/boundaries.test.ts. ARCHITECTURE.md's module map describes each folder.
 */
const CAPABILITIES = ['src/convert', 'src/annotate', 'src/sign', 'src/verify', 'src/merge', 'src/preview', 'src/auth', 'src/telemetry'];
const LAYERS = [
  // What every layer throws, logs and counts against: errors, the logger, the request's deadline and output budget
  // (the format writers count what they write into it).
  { name: 'foundation', units: ['src/errors.ts', 'src/logger.ts', 'src/budget'] },
  // The homes of the formats: bytes in, objects out, nothing about requests, pools or capabilities.
  { name: 'formats', units: ['src/formats', 'src/crypto', 'src/pdf', 'src/docx'] },
  // What capabilities run on: configuration, native children, fetching, what replicas share, the pools, HTTP plumbing.
  {
    name: 'infrastructure',
    units: ['src/config', 'src/native', 'src/fetch', 'src/coordination', 'src/office', 'src/engines', 'src/http'],
  },
  // One folder per capability; one capability uses another only through its public surface.
  {
    name: 'capabilities',
    units: CAPABILITIES,
    peers: 'surface',
    surface: ['index.ts', 'module.ts'],
  },
  // Composition: the entry points, the app and the services built from the capabilities, the command line.
  {
    name: 'composition',
    units: ['src/main.ts', 'src/api.ts', 'src/services.ts', 'src/ingest-entry.ts', 'src/modules', 'src/cli'],
  },
];

/** Imports the layer order alone would allow but the design does not. */
const FORBID = [
  { from: 'src/crypto', to: 'src/pdf', message: 'ASN.1 and DER sit below PDF: src/crypto never depends on src/pdf.' },
  { from: 'src/crypto', to: 'src/docx', message: 'src/crypto depends on no other format home.' },
  { from: 'src/formats', to: 'src/pdf', message: 'sniffing sits below the format homes.' },
  { from: 'src/formats', to: 'src/docx', message: 'sniffing sits below the format homes.' },
  { from: 'src/formats', to: 'src/crypto', message: 'sniffing sits below the format homes.' },
  // Engines know nothing of HTTP: below the capabilities only src/http does; in a capability only its routes,
  // schemas and module (what it serves) do.
  {
    from: ['src/config', 'src/native', 'src/fetch', 'src/coordination', 'src/office', 'src/engines'],
    to: 'src/http',
    message: 'engines know nothing of HTTP: take plain data and throw FolioError (src/errors.ts).',
  },
  {
    from: CAPABILITIES,
    to: 'src/http',
    exceptFiles: ['^(.+-)?routes\\.ts$', '^schema\\.ts$', '^module\\.ts$'],
    message: "engines know nothing of HTTP: only a capability's routes.ts, schema.ts and module.ts import src/http.",
  },
];

/** Known exceptions, each with its reason; the aim is none. */
const ALLOW = [
  { from: 'src/auth/types.ts', to: 'src/http/types.ts', reason: 'the auth service implements the key check the HTTP layer declares' },
  { from: 'src/telemetry/http.ts', to: 'src/http', reason: "the ingest's own Fastify app, on the API's envelope and body parser" },
];

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', 'data/', '.tmp/', '.tmp-*/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    rules: {
      // `_`-prefixed names are deliberately unused (callback positions, destructuring that drops a field).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Type-aware rules: the ones that catch bugs, not style. They need the TypeScript program: tsconfig.check.json
    // covers src, test, bench, scripts and the client package, playground/tsconfig.json the playground's src. The
    // files outside these globs (the JavaScript files, playground/vite.config.ts) get the syntax-only rules above.
    files: [
      'src/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.ts',
      'packages/client/src/**/*.ts',
      'packages/client/test/**/*.ts',
      'vitest.config.ts',
      'playground/src/**/*.ts',
    ],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.check.json', './playground/tsconfig.json'], tsconfigRootDir: root },
    },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and its ordering.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a void one is expected (event handlers, forEach, timers): nobody sees it fail.
      '@typescript-eslint/no-misused-promises': 'error',
      // `await` on something that is not a promise: the code believes a call is asynchronous when it is not.
      '@typescript-eslint/await-thenable': 'error',
      // `return promise` inside try/catch/finally: the catch never sees the rejection, finally runs too early.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // for…in over an array walks string keys (and inherited ones), not elements.
      '@typescript-eslint/no-for-in-array': 'error',
      // sort() without a comparator sorts numbers as strings.
      '@typescript-eslint/require-array-sort-compare': ['error', { ignoreStringArrays: true }],
    },
  },
  {
    files: ['src/**/*.{ts,js,mjs}'],
    plugins: { folio: layers },
    rules: { 'folio/layers': ['error', { root, layers: LAYERS, forbid: FORBID, allow: ALLOW }] },
  },
  {
    // One PDF home: only src/pdf imports @cantoo/pdf-lib. Input bytes reach it through openForAuthoring (the
    // bounded reader first, pdf-lib on the objects it read); capabilities get pdf-lib's object model, drawing
    // and writer from src/pdf/index.js (src/pdf/model.ts), never its parser.
    files: ['src/**/*.ts'],
    ignores: ['src/pdf/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@cantoo/pdf-lib', message: 'Import PDF authoring from src/pdf/index.js (src/pdf/model.ts), never pdf-lib itself.' }],
        },
      ],
    },
  },
  {
    // pdf-lib's parser never runs on input bytes (openForAuthoring builds its documents from the reader's objects).
    files: ['src/**/*.ts'],
    ignores: ['src/pdf/authoring.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='PDFDocument'][callee.property.name='load']",
          message: 'Open PDFs with openForAuthoring from src/pdf (src/pdf/authoring.ts): it reads them with the bounded reader first.',
        },
      ],
    },
  },
  {
    // The client runs in browsers too, and tests drive one (Playwright's page.evaluate bodies).
    files: ['packages/client/**/*.ts', 'test/**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    // Tests read JSON bodies and assert on their shape at run time; typing each one would only restate the assertion.
    files: ['test/**/*.ts', 'packages/client/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
