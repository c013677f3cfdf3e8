/**
 * The verify module: signature validation and modification analysis. It trusts the service's own identity
 * when there is one (`Services.signing`, made by the sign module) and TRUST_ANCHORS.
 */
import { Type } from '@fastify/type-provider-typebox';
import { Setting } from '../config/index.js';
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

export const verifySettings = Type.Object({
  /** A PEM file of further trusted CA certificates. */
  trustAnchors: Setting.optionalString('TRUST_ANCHORS'),
});

declare module '../config/index.js' {
  interface ModuleSettings {
    verify: typeof verifySettings;
  }
}

export default {
  id: 'verify',
  settings: verifySettings,
  tag: { name: 'verify', description: 'Signature validation and modification analysis' },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['verify.pdf'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
  workerData: ({ config, services }) => ({
    trust: {
      rootCertificatePem: services.signing?.rootCertificatePem,
      certificatePem: services.signing?.certificatePem,
      trustAnchorsPath: config.trustAnchors,
      previous: services.signing?.previous?.map((p) => ({ certificatePem: p.certificatePem, rootCertificatePem: p.rootCertificatePem })),
    },
  }),
  routes: () => import('./routes.js').then((m) => m.verifyRoutes),
} satisfies Module;
