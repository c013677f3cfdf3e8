// What the root eslint.config.js imports: the lint packages, resolved from this folder's own node_modules.
export { default as js } from '@eslint/js';
export { default as globals } from 'globals';
export { default as tseslint } from 'typescript-eslint';
