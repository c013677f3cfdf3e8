/**
 * Builds @folio/client: dist/index.js (ESM, fflate bundled in, no Node built-ins, so the same file runs in
 * Node 20 and in browsers), dist/folio-client.min.js (the same, minified, for a <script type="module">), and
 * dist/types/*.d.ts (tsc, which also type-checks the package). Run from anywhere: `node packages/client/build.mjs`.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dir = path.dirname(fileURLToPath(import.meta.url));
const common = {
  entryPoints: [path.join(dir, 'src/index.ts')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022', 'chrome100', 'firefox100', 'safari15.4', 'node20'],
  legalComments: 'inline',
  logLevel: 'warning',
};
await build({ ...common, outfile: path.join(dir, 'dist/index.js'), sourcemap: true });
await build({ ...common, outfile: path.join(dir, 'dist/folio-client.min.js'), minify: true, sourcemap: true });

const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error('@folio/client: type check failed');
  process.exit(r.status ?? 1);
}
