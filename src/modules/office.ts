/**
 * The LibreOffice pool as a module: one shared service (`Services.office`) that convert, annotate, merge, sign
 * and previews use for DOCX → PDF. Its settings (OFFICE_*) are core ones, since the in-flight byte budget's
 * default depends on them (src/config/index.ts).
 */
import type { Module } from '../http/capability.js';

export default {
  id: 'office',
  async provision({ config, logger }) {
    const { createOfficePool } = await import('../office/index.js');
    const office = createOfficePool(config, logger);
    return {
      services: { office },
      health: [
        {
          name: 'office',
          required: true,
          status: () => {
            const { status, workers, busy, queued } = office.status();
            return { status, workers, busy, queued };
          },
        },
      ],
      close: () => office.close(),
      // Warm start: the workers boot LibreOffice now (while the other modules provision and the engine threads
      // warm up), so the first conversion is as fast as the next. A pool that cannot start keeps retrying and
      // health reports it unhealthy; the other capabilities still serve.
      ready: office.start().catch((e: unknown) => logger.error({ err: e }, 'the LibreOffice pool could not start')),
    };
  },
} satisfies Module;
