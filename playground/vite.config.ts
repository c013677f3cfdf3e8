// The playground page (served by the API at `/`): `npm run build:playground` writes it to dist/playground.
import path from 'node:path';
import { defineConfig } from 'vite';

const here = import.meta.dirname;

export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: path.resolve(here, '../dist/playground'),
    emptyOutDir: true,
    target: 'es2022',
    // No inline polyfill script: the page's CSP allows same-origin scripts only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2048,
  },
});
