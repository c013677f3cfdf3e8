/**
 * Before/after numbers for the ingest's failure modes (issue 24), against any checkout's compiled ingest:
 *   npx tsx test/chaos/ingest-measure.ts [root]       (root: default this checkout; /tmp/before for "before")
 * Needs PostgreSQL at 127.0.0.1:5432 (each run uses a fresh database). Prints one JSON object per scenario:
 * the PostgreSQL cut (process alive, unanswered, acknowledged-but-lost, stored-but-not-acknowledged), NUL
 * poisoning (other licences' non-2xx), inflation (unique documents accepted per second for one licence) and
 * ADMIN_TOKEN guesses checked per second.
 */
import path from 'node:path';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';
import { adminGuessScenario, cutScenario, inflationScenario, poisonScenario, spawnIngest, startProxy, type CuttableProxy } from './ingest-harness.js';

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '../..'));
if (!(await postgresAvailable())) {
  console.error('PostgreSQL at 127.0.0.1:5432 is not reachable');
  process.exit(2);
}

async function run(name: string, fn: (env: { url: string; proxyUrl: string; proxy: CuttableProxy }) => Promise<unknown>) {
  const db = await createTestDatabase('folio_chaos_measure');
  const u = new URL(db.url);
  const proxy = await startProxy(Number(u.port || 5432));
  const proxyUrl = db.url.replace(`${u.hostname}:${u.port || 5432}`, `127.0.0.1:${proxy.port}`);
  try {
    console.log(JSON.stringify({ scenario: name, root, ...((await fn({ url: db.url, proxyUrl, proxy })) as object) }));
  } finally {
    await proxy.close();
    await db.drop();
  }
}

await run('pg-cut', async ({ url, proxyUrl, proxy }) => {
  const ingest = await spawnIngest(root, { TELEMETRY_DATABASE_URL: proxyUrl });
  try {
    return await cutScenario(ingest, proxy, url, { requests: 600, concurrency: 200, cuts: 3, licenseKey: 'chaos-cut' });
  } finally {
    if (ingest.exited() !== undefined) console.error(ingest.output().split('\n').slice(-8).join('\n'));
    await ingest.stop();
  }
});

await run('nul-poison', async ({ url, proxyUrl }) => {
  const ingest = await spawnIngest(root, { TELEMETRY_DATABASE_URL: proxyUrl });
  try {
    return await poisonScenario(ingest, url, { perLicence: 150, tag: 'measure' });
  } finally {
    await ingest.stop();
  }
});

await run('inflation', async ({ proxyUrl }) => {
  const ingest = await spawnIngest(root, { TELEMETRY_DATABASE_URL: proxyUrl });
  try {
    return await inflationScenario(ingest, { licenseKey: 'chaos-inflate', seconds: 4, concurrency: 10 });
  } finally {
    await ingest.stop();
  }
});

await run('admin-guesses', async ({ proxyUrl }) => {
  const ingest = await spawnIngest(root, { TELEMETRY_DATABASE_URL: proxyUrl });
  try {
    return await adminGuessScenario(ingest, { seconds: 3, concurrency: 20 });
  } finally {
    await ingest.stop();
  }
});
