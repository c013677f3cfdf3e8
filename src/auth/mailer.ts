/**
 * Outgoing mail: SMTP through nodemailer when SMTP_URL is set; otherwise each message is written as an
 * .eml file into DATA_DIR/outbox (the embedded default), and only the file path is logged.
 *
 * An SMTP server that is unreachable, slow to greet or stalls mid-message fails the send within
 * SMTP_TIMEOUT_MS per stage (nodemailer's defaults are minutes) as a 503 SERVICE_UNAVAILABLE with Retry-After.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { FolioError } from '../errors.js';

/** Connecting (DNS included), the greeting, and any silence during the exchange: each at most this long. */
export const SMTP_TIMEOUT_MS = 5000;
export const MAIL_RETRY_AFTER_SECONDS = 30;

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

export function createMailer(opts: { smtpUrl?: string; from: string; outboxDir: string; logger: Logger; timeoutMs?: number }): Mailer {
  if (opts.smtpUrl) {
    const timeoutMs = opts.timeoutMs ?? SMTP_TIMEOUT_MS;
    const transport = nodemailer.createTransport({
      url: opts.smtpUrl,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      dnsTimeout: timeoutMs,
    });
    return {
      async send(m) {
        try {
          await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text });
        } catch (err) {
          const e = err as { code?: string; responseCode?: number; message?: string };
          // Never the message (it holds the code); the SMTP failure itself is safe to log.
          opts.logger.warn({ smtpError: e.code, responseCode: e.responseCode, reason: e.message }, 'SMTP delivery failed');
          throw new FolioError('SERVICE_UNAVAILABLE', 'The verification e-mail could not be sent; retry later', {
            retryAfter: MAIL_RETRY_AFTER_SECONDS,
            cause: err,
          });
        }
      },
      async close() {
        transport.close();
      },
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(m) {
      const info = await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text });
      await fs.mkdir(opts.outboxDir, { recursive: true, mode: 0o700 });
      const file = path.join(opts.outboxDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
      await fs.writeFile(file, info.message as Buffer, { mode: 0o600 });
      opts.logger.info({ outboxFile: file }, 'mail written to the local outbox (no SMTP_URL configured)');
    },
    async close() {},
  };
}
