// What the root eslint.config.js imports: the lint packages, resolved from this folder's own node_modules.
export { default as js } from '@eslint/js';
export { default as globals } from 'globals';
export { default as tseslint } from 'typescript-eslint';
export { default as layers } from './layers.js';
// For test/lint/boundaries.test.ts, which lints snippets with the repository's configuration.
export { ESLint } from 'eslint';
