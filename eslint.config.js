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
