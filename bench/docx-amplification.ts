/**
 * DOCX → HTML/Markdown output amplification (issue 23) against the real API process: the ~1 MB DOCX whose one
 * picture is shown 380 times (to=html and to=md, one request, then four at once) and the few-KB DOCX whose one
 * source island is named by 400 content controls (to=md). Per case: status, answer size, time, the peak RSS of
 * the server's process tree (sampled every 50 ms) and the slowest /v1/health answer meanwhile.
 *
 *   npm run bench -- docx-amplification
 *   node --import tsx bench/docx-amplification.ts /tmp/before     (another checkout, built into its own dist/)
 *
 * The server runs with its defaults except one LibreOffice worker (the office pool is not used here); the
 * environment passes through (OUTPUT_MAX_MB=1024 shows a 506 MB HTML answer made and sent as bytes).
 * BENCH_ONLY=substring keeps the cases whose label contains it.
 */
import path from 'node:path';
import { repeatedIslandDocx, repeatedPictureDocx } from '../test/amplification/docx-amplifiers.js';

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
// The harness of the checkout measured (its ROOT is that checkout, so its own dist/ runs).
const harness = (await import(path.join(root, 'test/adversarial/server.ts'))) as typeof import('../test/adversarial/server.js');
const { FolioProcess, HealthPoller, MB, descendants } = harness;

const picture = repeatedPictureDocx({ imageBytes: 1_000_000, references: 380 });
const island = repeatedIslandDocx({ sourceChars: 1_040_000, controls: 400 });
console.log(`checkout: ${root}`);
console.log(
  `inputs: picture DOCX ${(picture.length / 1024).toFixed(0)} KB (380 references), island DOCX ${(island.length / 1024).toFixed(1)} KB (400 controls)`,
);

const srv = await FolioProcess.start({ OFFICE_WORKERS: '1', LOG_LEVEL: 'error' });
const key = await srv.newKey();
const poller = new HealthPoller(srv.url, 50);
const treeRss = () => (srv.rss() ?? 0) + descendants(srv.pid).reduce((s, d) => s + d.rss, 0);

async function measure(label: string, name: string, bytes: Buffer, to: 'md' | 'html', parallel = 1): Promise<void> {
  if (process.env.BENCH_ONLY && !label.includes(process.env.BENCH_ONLY)) return;
  let peak = treeRss();
  const sampler = setInterval(() => (peak = Math.max(peak, treeRss())), 50);
  const from = Date.now();
  const answers = await Promise.all(
    Array.from({ length: parallel }, () => srv.send({ method: 'POST', path: `/v1/convert?to=${to}`, file: { name, bytes } }, key, 180_000)),
  );
  clearInterval(sampler);
  const health = await poller.window(from, Date.now());
  const worst = Math.max(0, ...health.map((h) => (h.status === 200 ? h.ms : 2000)));
  const shown = answers.map((a) => `${a.status || a.error} ${(a.body.length / MB).toFixed(1)} MB ${(a.ms / 1000).toFixed(1)} s`).join(' | ');
  const code =
    answers
      .find((a) => a.status >= 400)
      ?.body.toString('utf8')
      .slice(0, 160) ?? '';
  console.log(
    `${label.padEnd(28)} ${shown}; peak RSS ${(peak / MB).toFixed(0)} MB; health max ${worst.toFixed(0)} ms${srv.alive() ? '' : '; SERVER DIED'}`,
  );
  if (code) console.log(`${''.padEnd(28)} ${code}`);
}

try {
  await measure('380 pictures → html', 'pictures.docx', picture, 'html');
  if (srv.alive()) await measure('380 pictures → md', 'pictures.docx', picture, 'md');
  if (srv.alive()) await measure('400 islands → md', 'islands.docx', island, 'md');
  if (srv.alive()) await measure('380 pictures → html ×4', 'pictures.docx', picture, 'html', 4);
  if (srv.alive()) await measure('380 pictures → md ×4', 'pictures.docx', picture, 'md', 4);
} finally {
  await poller.stop();
  await srv.stop();
}
