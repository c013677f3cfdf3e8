/**
 * An AbortSignal that fires when the client of a request goes away before its answer was sent, so the
 * engine job working for nobody is stopped and its worker thread freed for the next request.
 */
import type { FastifyReply } from 'fastify';

export function abandonSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  // 'close' fires on the response both when it was fully sent and when the connection dropped first; only
  // the second means nobody waits for the answer.
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client disconnected'));
  };
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
