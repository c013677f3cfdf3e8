/**
 * The sign module: PAdES signatures with an audit trail, and the generated CA's public routes. It serves
 * only with a signing identity (SIGNING_P12, else one generated into DATA_DIR); its provisioning loads it.
 */
import { Type } from '@fastify/type-provider-typebox';
import { ConfigError, Setting } from '../config/index.js';
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
    privateKeyPem: signing.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
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
    return { available: signing !== undefined, services: { signing } };
  },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['sign.seal'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
  // What cannot cross threads (the keys) goes as PEM; the thread rebuilds the identity once (./tasks.ts).
  workerData: ({ config, services }) => ({
    signing: services.signing && serialize(services.signing),
    tsaUrl: config.tsaUrl,
    tsaOptional: config.tsaOptional,
  }),
  routes: () => import('./routes.js').then((m) => m.signRoutes),
} satisfies Module;
