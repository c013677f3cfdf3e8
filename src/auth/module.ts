/**
 * The auth module: API keys by e-mail verification. Its store (SQLite in DATA_DIR, or PostgreSQL) and mailer
 * are made at start-up; `Services.auth` also authenticates every keyed request (src/http/app.ts).
 */
import { Type } from '@fastify/type-provider-typebox';
import { Setting } from '../config/index.js';
import type { Module } from '../http/capability.js';
import type { AuthService } from './types.js';

export const authSettings = Type.Object({
  /** PostgreSQL for keys and codes (replicas share it); absent: SQLite in DATA_DIR. */
  databaseUrl: Setting.url('DATABASE_URL', ['postgres:', 'postgresql:']),
  /** Where verification codes are sent; absent: `.eml` files in DATA_DIR/outbox. */
  smtpUrl: Setting.url('SMTP_URL', ['smtp:', 'smtps:']),
  mailFrom: Setting.string('MAIL_FROM', { default: 'Folio <no-reply@folio.localhost>', pattern: '@', message: 'must contain an e-mail address' }),
  /** Secret for keyed hashes of verification codes; generated into the store when absent. */
  codeHashSecret: Setting.optionalString('CODE_HASH_SECRET'),
  /** Per-client (IP) windows of POST /v1/auth/register and /v1/auth/verify (shared through Redis when set). */
  authClientWindowMs: Setting.integer('AUTH_CLIENT_WINDOW_SECONDS', { default: 600, minimum: 10, maximum: 86_400, scale: 1000 }),
  authRegisterPerClient: Setting.integer('AUTH_REGISTER_PER_CLIENT', { default: 20, minimum: 1, maximum: 1_000_000 }),
  authVerifyPerClient: Setting.integer('AUTH_VERIFY_PER_CLIENT', { default: 30, minimum: 1, maximum: 1_000_000 }),
});

declare module '../config/index.js' {
  interface ModuleSettings {
    auth: typeof authSettings;
  }
}

declare module '../http/capability.js' {
  interface Services {
    /** Keys, codes and the key check of every keyed request (src/auth). */
    auth: AuthService;
  }
}

export default {
  id: 'auth',
  settings: authSettings,
  tag: { name: 'auth', description: 'API keys by e-mail verification' },
  async provision({ config, logger, services }) {
    const { createAuthService } = await import('./service.js');
    const auth = await createAuthService(config, logger, undefined, { coordination: services.coordination });
    return { services: { auth }, close: () => auth.close() };
  },
  routes: () => import('./routes.js').then((m) => m.authRoutes),
} satisfies Module;
