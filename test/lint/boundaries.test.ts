/**
 * The lint rules bite: snippets linted with the repository's eslint.config.js through ESLint's Node API (from
 * tools/lint). Layer snippets use made-up `.mjs` paths (the layer rule reads paths only, and JavaScript files need
 * no TypeScript program); TypeScript snippets take the path of a real file in src/ (type-aware rules only run on
 * files of tsconfig.check.json), whose text ESLint replaces with the snippet's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const LINT_ENTRY = path.join(root, 'tools/lint/index.js');
const available = fs.existsSync(path.join(root, 'tools/lint/node_modules/eslint'));
if (!available)
  console.warn('tools/lint/node_modules has no ESLint (run `npm ci --prefix tools/lint`, as scripts/setup.sh does): the lint rule tests are SKIPPED');

interface LintMessage {
  ruleId: string | null;
  message: string;
}
interface Linter {
  lintText(code: string, options: { filePath: string }): Promise<Array<{ messages: LintMessage[] }>>;
}

let eslint: Linter;
beforeAll(async () => {
  if (!available) return;
  // With CI=true typescript-eslint assumes one run over files as they are on disk ("single run" inference) and
  // type-checks the file's text from disk, not the snippet given to lintText: every snippet would lint clean.
  process.env.TSESTREE_SINGLE_RUN = 'false';
  const { ESLint } = (await import(LINT_ENTRY)) as { ESLint: new (options: { cwd: string }) => Linter };
  eslint = new ESLint({ cwd: root });
});

async function lint(filePath: string, code: string): Promise<LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages;
}
const rules = (messages: LintMessage[]) => messages.map((m) => m.ruleId);
const layerErrors = (messages: LintMessage[]) => messages.filter((m) => m.ruleId === 'folio/layers').map((m) => m.message);

/** A real TypeScript file of the folder, so the type-aware parser finds it in the program. */
function realFile(folder: string): string {
  const dir = path.join(root, folder);
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const name = names.includes('index.ts') ? 'index.ts' : names.sort()[0];
  if (!name) throw new Error(`no TypeScript file in ${folder}`);
  return `${folder}/${name}`;
}

describe.skipIf(!available)('folio/layers', () => {
  it('refuses an import from a lower layer to a higher one', async () => {
    const errors = layerErrors(await lint('src/pdf/x.mjs', "import { signDocument } from '../sign/index.js';\nexport const f = signDocument;\n"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/src\/pdf\/x\.mjs \(formats\) imports src\/sign\/index\.ts \(capabilities\)/);
  });

  it('refuses the composition root below composition, however deep the importer and however it imports', async () => {
    const code = [
      "import { buildApi } from '../../api.js';",
      "export { startServices } from '../../services.js';",
      "export const later = () => import('../../main.js');",
      '',
    ].join('\n');
    const errors = layerErrors(await lint('src/verify/rules/x.mjs', code));
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toMatch(/\(capabilities\) imports src\/(api|services|main)\.ts \(composition\)/);
  });

  it('lets a capability use another through its index.ts only, never its internals', async () => {
    expect(layerErrors(await lint('src/sign/x.mjs', "export { verifyPdf } from '../verify/index.js';\n"))).toEqual([]);
    const errors = layerErrors(await lint('src/sign/x.mjs', "export { verifyPdf } from '../verify/verify.js';\n"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/inside src\/verify: import src\/verify\/index\.ts/);
  });

  it('keeps src/crypto below src/pdf', async () => {
    const errors = layerErrors(await lint('src/crypto/x.mjs', "import { openPdf } from '../pdf/index.js';\nexport const f = openPdf;\n"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/src\/crypto never depends on src\/pdf/);
  });

  it('refuses an engine importing a capability, also lazily', async () => {
    const errors = layerErrors(await lint('src/engines/x.mjs', "export const load = () => import('../convert/index.js');\n"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/\(infrastructure\) imports src\/convert\/index\.ts \(capabilities\)/);
  });

  it('keeps HTTP out of the engines: infrastructure below src/http and capability files other than routes, schema, module', async () => {
    const code = "import { abandonSignal } from '../http/abandon.js';\nexport const a = abandonSignal;\n";
    for (const file of ['src/office/x.mjs', 'src/engines/x.mjs', 'src/merge/engine-x.mjs']) {
      const errors = layerErrors(await lint(file, code));
      expect(errors, file).toHaveLength(1);
      expect(errors[0]).toMatch(/engines know nothing of HTTP/);
    }
  });

  it('lets the engine thread reach capabilities only through the module list', async () => {
    const code = "export const load = () => import('../sign/tasks.js');\n";
    const errors = layerErrors(await lint('src/engines/worker.ts', code));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/src\/engines\/worker\.ts \(infrastructure\) imports src\/sign\/tasks\.ts \(capabilities\)/);
  }, 180_000);

  it('allows the downward imports', async () => {
    const code = [
      "import { FolioError } from '../errors.js';",
      "import { openPdf } from '../pdf/index.js';",
      "import { Deadline } from '../budget/index.js';",
      "import { createOfficePool } from '../office/index.js';",
      "import { readFile } from 'node:fs/promises';",
      'export { FolioError, openPdf, Deadline, createOfficePool, readFile };',
      '',
    ].join('\n');
    expect(layerErrors(await lint('src/merge/x.mjs', code))).toEqual([]);
    // A capability's routes use the HTTP layer.
    const routes = "import { abandonSignal } from '../http/abandon.js';\nexport const a = abandonSignal;\n";
    expect(layerErrors(await lint('src/merge/routes.ts', routes))).toEqual([]);
  }, 180_000);

  it('names a folder that is in no layer', async () => {
    const errors = layerErrors(await lint('src/newfolder/x.mjs', 'export const x = 1;\n'));
    expect(errors).toEqual(['src/newfolder/x.mjs is in no layer: add its folder to the layer table in eslint.config.js.']);
  });

  it('sees type-only imports and import types in TypeScript', async () => {
    const file = realFile('src/pdf');
    const code = [
      "import type { VerifyResult } from '../verify/index.js';",
      "export type A = VerifyResult | typeof import('../sign/index.js');",
      '',
    ].join('\n');
    const errors = layerErrors(await lint(file, code));
    expect(errors).toHaveLength(2);
  }, 180_000);
});

describe.skipIf(!available)('one PDF home', () => {
  it('refuses @cantoo/pdf-lib outside src/pdf', async () => {
    const code = "import { PDFDocument } from '@cantoo/pdf-lib';\nexport const D = PDFDocument;\n";
    expect(rules(await lint(realFile('src/merge'), code))).toEqual(['no-restricted-imports']);
    expect(rules(await lint(realFile('src/pdf'), code))).toEqual([]);
  }, 180_000);
});

describe.skipIf(!available)('type-aware rules', () => {
  it('refuses a floating promise and a promise where a void callback is expected; accepts them handled', async () => {
    const file = realFile('src/pdf');
    const floating = ['async function work(): Promise<void> {}', 'export function start(): void {', '  work();', '}', ''].join('\n');
    expect(rules(await lint(file, floating))).toContain('@typescript-eslint/no-floating-promises');

    const misused = [
      'async function work(): Promise<void> {}',
      'export function start(list: string[]): void {',
      '  list.forEach(async () => work());',
      '}',
      '',
    ].join('\n');
    expect(rules(await lint(file, misused))).toContain('@typescript-eslint/no-misused-promises');

    const handled = [
      'async function work(): Promise<void> {}',
      'export async function start(list: string[]): Promise<void> {',
      '  await work();',
      '  // Nothing is lost: work() never rejects.',
      '  void work();',
      '  await Promise.all(list.map(() => work()));',
      '}',
      '',
    ].join('\n');
    expect(await lint(file, handled)).toEqual([]);
  }, 180_000);

  it('refuses awaiting a value that is not a promise and a numeric sort without a comparator', async () => {
    const file = realFile('src/pdf');
    const code = ['export async function f(n: number[]): Promise<number[]> {', '  await n.length;', '  return n.sort();', '}', ''].join('\n');
    expect(rules(await lint(file, code))).toEqual(['@typescript-eslint/await-thenable', '@typescript-eslint/require-array-sort-compare']);
  }, 180_000);
});
