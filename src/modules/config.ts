/**
 * The one configuration schema — the core settings (src/config/index.ts) and every module's — and the one
 * reading of the environment through it: at the server's start (src/main.ts) and the CLI's
 * (src/cli/context.ts). A bad variable throws a ConfigError whose message is one line naming it.
 */
import { Type, type TObject } from '@fastify/type-provider-typebox';
import { CORE_SETTINGS, joinSettings, readSettings, type Config, type Env } from '../config/index.js';
import type { Module } from '../http/capability.js';
import { MODULES } from './index.js';

export function configSchema(modules: readonly Module[] = MODULES): TObject {
  return joinSettings([
    { owner: 'core', settings: CORE_SETTINGS },
    ...modules.flatMap((m) => (m.settings ? [{ owner: m.id, settings: m.settings }] : [])),
  ]);
}

/** The configuration from the environment (every variable optional; defaults as the settings state them). */
export function loadConfig(env: Env = process.env, modules: readonly Module[] = MODULES): Config {
  return readSettings(configSchema(modules), env) as Config;
}

/**
 * Some settings alone, read through the same schemas (the CLI's default concurrency is OFFICE_WORKERS; a
 * remote command must not fail on server settings it does not use).
 */
export function loadSettings<K extends keyof Config & string>(keys: readonly K[], env: Env = process.env): Pick<Config, K> {
  const all = configSchema().properties;
  return readSettings(Type.Object(Object.fromEntries(keys.map((k) => [k, all[k]!]))), env) as Pick<Config, K>;
}
