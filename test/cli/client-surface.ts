/**
 * Compile-time check (`tsc -p tsconfig.check.json`, part of `npm test`): @folio/client's FolioClient has
 * every method the CLI calls, with compatible arguments and answers (src/cli/client.ts states that surface
 * and loads the package at run time).
 */
import type { FolioClient } from '../../packages/client/src/index.js';
import type { CliClient } from '../../src/cli/client.js';

export const folioClientServesTheCli = (client: FolioClient): CliClient => client;
