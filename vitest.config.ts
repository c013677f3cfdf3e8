import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Suites that load the machine on purpose (hostile inputs, output amplification, bursts of uploads and
 * connections) and assert health latency and RSS of a server they start: they run after every other suite,
 * one file at a time, so what they measure is their own load and not another test file's LibreOffice.
 */
const LOAD_SUITES = ['test/adversarial/**/*.test.ts', 'test/amplification/**/*.test.ts', 'test/chaos/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // LibreOffice workers and servers are heavy: test files in separate processes, two at a time.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'suites',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...LOAD_SUITES],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'load',
          include: LOAD_SUITES,
          // One file at a time, in one process (each file starts and stops its own servers).
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
