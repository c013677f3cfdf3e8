/** The Redis the shared-limit tests use (FOLIO_TEST_REDIS_URL), and whether it answers a TCP connect within 1.5 s. */
import net from 'node:net';

export const REDIS_URL = process.env.FOLIO_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when Redis accepts a connection; otherwise warns that `suite` is skipped and resolves false. */
export async function redisReachable(suite: string): Promise<boolean> {
  const up = await new Promise<boolean>((resolve) => {
    const u = new URL(REDIS_URL);
    const s = net.connect(Number(u.port || 6379), u.hostname);
    s.setTimeout(1500);
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
  if (!up) console.warn(`Redis is not reachable at ${REDIS_URL}: ${suite} is SKIPPED`);
  return up;
}
