/**
 * The sign module: PAdES signatures with an audit trail, and the generated CA's public routes. It serves
 * only with a signing identity (a PKCS#11 token, SIGNING_P12, else one generated into DATA_DIR); its
 * provisioning loads it, and a token's health joins /v1/health as `signingKey`.
 */
import { Type } from '@fastify/type-provider-typebox';
import { ConfigError, Setting } from '../config/index.js';
import { parsePkcs11Uri, Pkcs11UriError } from './signer/pkcs11-uri.js';
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';
import type { SerializedSigningIdentity, SigningIdentity } from './identity-types.js';

export const signSettings = Type.Object({
  /** A PKCS#12 file with the signing key and certificates; absent: an identity generated into DATA_DIR. */
  signingP12: Setting.optionalString('SIGNING_P12'),
  signingP12Password: Setting.custom('SIGNING_P12_PASSWORD', Type.Optional(Type.String()), (raw, ctx) => {
    // Taken as written (a password may begin or end with spaces, or be empty).
    if (raw !== undefined && ctx.values.signingP12 === undefined) throw new ConfigError(ctx.name, 'is set but SIGNING_P12 is not');
    return raw;
  }),
  /** A PKCS#11 library: the key stays in its token (with SIGNING_PKCS11_URI and SIGNING_CERT_CHAIN). */
  signingPkcs11Module: Setting.custom('SIGNING_PKCS11_MODULE', Type.Optional(Type.String()), (raw, ctx) => {
    const value = raw?.trim() || undefined;
    if (value !== undefined && ctx.values.signingP12 !== undefined)
      throw new ConfigError(ctx.name, 'and SIGNING_P12 are both set: sign with one key');
    return value;
  }),
  /** RFC 7512 URI of the token's private key, with its PIN (pin-source=file:… or pin-value=). */
  signingPkcs11Uri: Setting.custom('SIGNING_PKCS11_URI', Type.Optional(Type.String()), (raw, ctx) => {
    const value = raw?.trim() || undefined;
    const module = ctx.values.signingPkcs11Module;
    if (value === undefined) {
      if (module !== undefined)
        throw new ConfigError(
          ctx.name,
          'must name the key (pkcs11:token=…;object=…;type=private?pin-source=file:…) when SIGNING_PKCS11_MODULE is set',
        );
      return undefined;
    }
    if (module === undefined) throw new ConfigError(ctx.name, 'is set but SIGNING_PKCS11_MODULE is not');
    try {
      parsePkcs11Uri(value);
    } catch (e) {
      // The message names the attribute at fault, never the value (it may hold the PIN).
      if (e instanceof Pkcs11UriError) throw new ConfigError(ctx.name, `is not a valid PKCS#11 URI (RFC 7512): ${e.message}`);
      throw e;
    }
    return value;
  }),
  /** PEM file: the token key's certificate first, then its chain. */
  signingCertChain: Setting.custom('SIGNING_CERT_CHAIN', Type.Optional(Type.String()), (raw, ctx) => {
    const value = raw?.trim() || undefined;
    if (value === undefined && ctx.values.signingPkcs11Module !== undefined)
      throw new ConfigError(ctx.name, "must name the PEM file of the token key's certificate chain");
    if (value !== undefined && ctx.values.signingPkcs11Module === undefined)
      throw new ConfigError(ctx.name, 'is set but SIGNING_PKCS11_MODULE is not (SIGNING_P12 and the generated identity carry their certificates)');
    return value;
  }),
  /** RSA keys: PKCS#1 v1.5 (default, what every validator reads) or RSASSA-PSS. */
  signingRsaPadding: Setting.custom(
    'SIGNING_RSA_PADDING',
    Type.Union([Type.Literal('pkcs1'), Type.Literal('pss')], { default: 'pkcs1' }),
    (raw, ctx) => {
      const value = raw?.trim().toLowerCase() || 'pkcs1';
      if (value !== 'pkcs1' && value !== 'pss') throw new ConfigError(ctx.name, 'must be one of pkcs1, pss');
      return value;
    },
  ),
  /** PEM files (comma-separated) of the certificate chains signed with before a rotation: published and trusted. */
  signingPreviousCertChain: Setting.list('SIGNING_PREVIOUS_CERT_CHAIN', {
    pattern: '^[^,]+$',
    message: (entry) => `has an empty entry near "${entry}"`,
  }),
  /** RFC 3161 timestamp authority: signatures are B-T (or higher) with it. */
  tsaUrl: Setting.url('TSA_URL', ['http:', 'https:']),
  /** Operator opt-in: sign without a timestamp when the TSA fails (default: the request fails). */
  tsaOptional: Setting.boolean('TSA_OPTIONAL', { default: false }),
});

declare module '../config/index.js' {
  interface ModuleSettings {
    sign: typeof signSettings;
  }
}

declare module '../http/capability.js' {
  interface Services {
    /** The service's signing identity; absent: this instance does not sign (and verify trusts only TRUST_ANCHORS). */
    signing?: SigningIdentity;
  }
}

function serialize(signing: SigningIdentity): SerializedSigningIdentity {
  return {
    // A file key crosses as PEM (as it always has); a token's key does not cross: the thread gets the channel to its host.
    signer: signing.signer.threadData(),
    keyAlgorithm: signing.keyAlgorithm,
    chainDer: signing.chainDer,
    certificatePem: signing.certificatePem,
    rootCertificatePem: signing.rootCertificatePem,
    ...(signing.ca
      ? { ca: { privateKeyPem: signing.ca.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, certificateDer: signing.ca.certificateDer } }
      : {}),
  };
}

export default {
  id: 'sign',
  settings: signSettings,
  tag: { name: 'sign', description: 'PAdES signatures with an audit trail' },
  async provision({ config, logger }) {
    const { loadSigningIdentity } = await import('./index.js');
    const signing = await loadSigningIdentity(config, logger);
    const keyHost = signing.keyHost;
    return {
      available: signing !== undefined,
      services: { signing },
      // A token that cannot be reached leaves every other capability serving: not required, "degraded".
      ...(keyHost ? { health: [{ name: 'signingKey', required: false, status: () => keyHost.status() }], close: () => keyHost.close() } : {}),
    };
  },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['sign.seal'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
  // What cannot cross threads: a file key goes as PEM, a token key as its host's channel; the thread rebuilds the identity once (./tasks.ts).
  workerData: ({ config, services }) => ({
    signing: services.signing && serialize(services.signing),
    tsaUrl: config.tsaUrl,
    tsaOptional: config.tsaOptional,
  }),
  routes: () => import('./routes.js').then((m) => m.signRoutes),
} satisfies Module;
