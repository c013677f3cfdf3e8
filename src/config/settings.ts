/**
 * Settings as TypeBox schemas. A setting is the schema of one configuration value (its `Static` type is the
 * value's type in `Config`), annotated with the environment variable it is read from (`x-env`) and a reader
 * that turns the variable's text into the value. Its keywords (`minimum`, `maximum`, `pattern`, `minLength`,
 * `default`) are in the variable's own unit, as an operator writes it (MB, seconds); `x-scale` converts.
 *
 * Each module declares its settings as one `Type.Object` of these (src/<module>/module.ts); the composition
 * root joins them with the core settings (src/config/index.ts) into one schema (`joinSettings`) and reads the
 * environment through it once (`readSettings`). The first bad variable stops with a ConfigError whose message
 * is one line naming it; the server prints it and exits 1, the CLI exits 2 with it.
 */
import path from 'node:path';
import {
  Type,
  type TArray,
  type TBoolean,
  type TInteger,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TString,
} from '@fastify/type-provider-typebox';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    issue: string,
  ) {
    super(`Invalid configuration: ${variable} ${issue}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** What a reader is given besides the variable's trimmed text (undefined when unset or blank). */
export interface ReadContext {
  /** The variable's name: the reader's errors name it. */
  name: string;
  env: Env;
  /** Values read so far, by key (a default may follow an earlier setting, e.g. the in-flight budget). */
  values: Readonly<Record<string, unknown>>;
}

type Reader = (raw: string | undefined, ctx: ReadContext) => unknown;

/** The reader of a setting schema, kept beside its JSON Schema keywords (not serialised with them). */
const READ = Symbol('folio.setting.read');

type Annotated = TSchema & { [READ]?: Reader; 'x-env'?: string };

const fail = (ctx: ReadContext, issue: string): never => {
  throw new ConfigError(ctx.name, issue);
};

function withReader<T extends TSchema>(schema: T, read: Reader): T {
  (schema as Annotated)[READ] = read;
  return schema;
}

/** An integer's bounds as the schema states them: the one check of every integer variable. */
function checkBounds(schema: TSchema, n: number, ctx: ReadContext): void {
  const { minimum = 0, maximum = Number.MAX_SAFE_INTEGER } = schema as { minimum?: number; maximum?: number };
  if (n < minimum || n > maximum) fail(ctx, `must be between ${minimum} and ${maximum}, got ${n}`);
}

function readInteger(schema: TSchema, raw: string, ctx: ReadContext): number {
  if (!/^\d+$/.test(raw)) fail(ctx, `must be an integer, got "${raw}"`);
  const n = Number(raw);
  checkBounds(schema, n, ctx);
  return n;
}

interface Described {
  description?: string;
}

interface IntegerOptions extends Described {
  minimum: number;
  maximum: number;
  /** Multiplies the variable's value into the configuration's unit (MB → bytes: 1024 × 1024). */
  scale?: number;
}

/** Value of a URL variable: parsed, and of one of the allowed protocols. */
function readUrl(raw: string, protocols: readonly string[], ctx: ReadContext): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return fail(ctx, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) fail(ctx, `must use ${protocols.join(' or ')} (got ${parsed.protocol})`);
  return raw;
}

/** The builders of settings; each returns a TypeBox schema, so `Static` of a module's object is its part of `Config`. */
export const Setting = {
  /**
   * An integer variable. `default` is in the variable's unit; a function default computes the value itself
   * (already scaled), e.g. from the CPU quota or from settings read before.
   */
  integer(env: string, o: IntegerOptions & { default: number | ((ctx: ReadContext) => number) }): TInteger {
    const scale = o.scale ?? 1;
    const schema = Type.Integer({
      'x-env': env,
      minimum: o.minimum,
      maximum: o.maximum,
      ...(typeof o.default === 'number' ? { default: o.default } : {}),
      ...(scale !== 1 ? { 'x-scale': scale } : {}),
      ...(o.description ? { description: o.description } : {}),
    });
    return withReader(schema, (raw, ctx) => {
      if (raw === undefined) return typeof o.default === 'function' ? o.default(ctx) : o.default * scale;
      return readInteger(schema, raw, ctx) * scale;
    });
  },

  /** An integer variable without a default: absent from the configuration when unset. */
  optionalInteger(env: string, o: IntegerOptions): TOptional<TInteger> {
    const scale = o.scale ?? 1;
    const schema = Type.Integer({
      'x-env': env,
      minimum: o.minimum,
      maximum: o.maximum,
      ...(scale !== 1 ? { 'x-scale': scale } : {}),
      ...(o.description ? { description: o.description } : {}),
    });
    return Type.Optional(withReader(schema, (raw, ctx) => (raw === undefined ? undefined : readInteger(schema, raw, ctx) * scale)));
  },

  /** `1|true|yes|on` or `0|false|no|off`, any case. */
  boolean(env: string, o: Described & { default: boolean }): TBoolean {
    return withReader(Type.Boolean({ 'x-env': env, default: o.default, ...(o.description ? { description: o.description } : {}) }), (raw, ctx) => {
      if (raw === undefined) return o.default;
      if (/^(1|true|yes|on)$/i.test(raw)) return true;
      if (/^(0|false|no|off)$/i.test(raw)) return false;
      return fail(ctx, `must be true or false, got "${raw}"`);
    });
  },

  /**
   * A text variable with a default. `pattern` (with `message` when it does not match), `minLength` and
   * `oneOf` are checked after `lowercase`.
   */
  string(
    env: string,
    o: Described & { default: string; pattern?: string; message?: string; lowercase?: boolean; oneOf?: readonly string[] },
  ): TString {
    const schema = Type.String({
      'x-env': env,
      default: o.default,
      ...(o.pattern ? { pattern: o.pattern } : {}),
      ...(o.oneOf ? { enum: [...o.oneOf] } : {}),
      ...(o.description ? { description: o.description } : {}),
    });
    return withReader(schema, (raw, ctx) => checkText(o.lowercase ? (raw ?? o.default).toLowerCase() : (raw ?? o.default), o, ctx));
  },

  /** A text variable without a default: absent when unset; `minLength`/`pattern` checked when set. */
  optionalString(env: string, o: Described & { minLength?: number; pattern?: string; message?: string } = {}): TOptional<TString> {
    const schema = Type.String({
      'x-env': env,
      ...(o.minLength !== undefined ? { minLength: o.minLength } : {}),
      ...(o.pattern ? { pattern: o.pattern } : {}),
      ...(o.description ? { description: o.description } : {}),
    });
    return Type.Optional(withReader(schema, (raw, ctx) => (raw === undefined ? undefined : checkText(raw, o, ctx))));
  },

  /** A URL of one of `protocols` (`'https:'`, with the colon); absent when unset. */
  url(env: string, protocols: readonly string[], o: Described & { trimTrailingSlash?: boolean } = {}): TOptional<TString> {
    const schema = Type.String({
      'x-env': env,
      format: 'uri',
      'x-protocols': [...protocols],
      ...(o.description ? { description: o.description } : {}),
    });
    return Type.Optional(
      withReader(schema, (raw, ctx) => {
        if (raw === undefined) return undefined;
        const value = readUrl(raw, protocols, ctx);
        return o.trimTrailingSlash ? value.replace(/\/+$/, '') : value;
      }),
    );
  },

  /** A directory, resolved against the working directory. */
  path(env: string, o: Described & { default: string }): TString {
    return withReader(Type.String({ 'x-env': env, default: o.default, ...(o.description ? { description: o.description } : {}) }), (raw) =>
      path.resolve(raw ?? o.default),
    );
  },

  /** A comma-separated list; each entry must match `pattern`, else `message(entry)` names it. */
  list(env: string, o: Described & { pattern: string; message: (entry: string) => string }): TArray<TString> {
    const item = new RegExp(o.pattern);
    return withReader(
      Type.Array(Type.String({ pattern: o.pattern }), { 'x-env': env, default: [], ...(o.description ? { description: o.description } : {}) }),
      (raw, ctx) => {
        const entries = (raw ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const entry of entries) if (!item.test(entry)) fail(ctx, o.message(entry));
        return entries;
      },
    );
  },

  /**
   * A setting whose reading is its own (several forms, a rule involving another variable): `schema` states
   * the value's type, `read` turns the variable (raw: not trimmed) into it and throws `ConfigError`s naming it.
   */
  custom<T extends TSchema>(env: string, schema: T, read: (raw: string | undefined, ctx: ReadContext) => unknown): T {
    (schema as Annotated)['x-env'] = env;
    return withReader(schema, (_trimmed, ctx) => read(ctx.env[env], ctx));
  },
};

function checkText(
  value: string,
  o: { minLength?: number; pattern?: string; message?: string; oneOf?: readonly string[] },
  ctx: ReadContext,
): string {
  if (o.oneOf && !o.oneOf.includes(value)) fail(ctx, `must be one of ${o.oneOf.join(', ')}`);
  if (o.pattern && !new RegExp(o.pattern).test(value)) fail(ctx, o.message ?? `must match ${o.pattern}`);
  if (o.minLength !== undefined && value.length < o.minLength) fail(ctx, `must be at least ${o.minLength} characters`);
  return value;
}

/** The environment variable a setting is read from. */
export function settingVariable(schema: TSchema): string | undefined {
  return (schema as Annotated)['x-env'];
}

/**
 * One schema from several modules' settings, in order. Two settings with one key or one variable are a
 * programming error (two modules claiming a name), reported at start-up and by test/modules.
 */
export function joinSettings(parts: ReadonlyArray<{ owner: string; settings: TObject }>): TObject {
  const properties: TProperties = {};
  const owners = new Map<string, string>();
  for (const { owner, settings } of parts) {
    for (const [key, schema] of Object.entries(settings.properties)) {
      const variable = settingVariable(schema) ?? key;
      for (const name of [`key ${key}`, `variable ${variable}`]) {
        const before = owners.get(name);
        if (before !== undefined) throw new Error(`settings of ${owner} and ${before} both declare the ${name}`);
        owners.set(name, owner);
      }
      properties[key] = schema;
    }
  }
  return Type.Object(properties);
}

/**
 * Reads the environment through a settings schema: every setting in order, the first bad variable throws
 * a ConfigError naming it. Keys of unset optional settings are present with `undefined`.
 */
export function readSettings(schema: TObject, env: Env): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(schema.properties)) {
    const read = (setting as Annotated)[READ];
    const name = settingVariable(setting);
    if (!read || !name) throw new Error(`setting ${key} was not built with Setting (src/config/settings.ts)`);
    const text = env[name];
    const raw = text === undefined || text.trim() === '' ? undefined : text.trim();
    values[key] = read(raw, { name, env, values });
  }
  return values;
}
