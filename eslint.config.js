// ESLint flat config: typescript-eslint's recommended rules, syntax only (no type information, so it stays fast).
// The packages live in tools/lint (own lock, own TypeScript 5.9 for the parser: see its package.json).
// Run with `npm run lint`; formatting is Prettier's job (.prettierrc.json), so no stylistic rules here.
import { globals, js, tseslint } from './tools/lint/index.js';

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', 'data/', '.tmp/', 'coverage/'] },
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
    // One PDF home: input bytes reach @cantoo/pdf-lib only through src/pdf's openForAuthoring (the bounded
    // reader first, pdf-lib on the objects it read). src/pdf may import pdf-lib; so may the files
    // below, which author on a document openForAuthoring opened (or on a new one) and need pdf-lib's object
    // model, drawing and writer — but not its parser (next two blocks).
    files: ['src/**/*.ts'],
    ignores: [
      'src/pdf/**',
      'src/sign/sign-pdf.ts', // edits the opened document's catalog, page tree, AcroForm; writes the new objects
      'src/sign/audit-page.ts', // draws the audit pages (fonts, text) into the opened document
      'src/merge/engine.ts', // builds the merged document: outline, page labels, signature values dropped
      'src/merge/copy-pages.ts', // copies the opened inputs' pages (pdf-lib's object copier)
      'src/merge/page-count.ts', // walks an opened input's page tree with a bound before pdf-lib's own walk
      'src/merge/writer.ts', // pdf-lib's writer, counted against the output budget
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@cantoo/pdf-lib', message: "Open PDFs with openForAuthoring from src/pdf (src/pdf/authoring.ts), not pdf-lib's parser." }],
        },
      ],
    },
  },
  {
    // The exceptions above may not reach pdf-lib's parser either.
    files: ['src/sign/sign-pdf.ts', 'src/sign/audit-page.ts', 'src/merge/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@cantoo/pdf-lib', importNames: ['PDFParser'], message: 'Open PDFs with openForAuthoring from src/pdf.' }] },
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
