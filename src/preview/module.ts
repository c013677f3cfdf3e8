/**
 * The preview module: page images (PNG/JPEG) of a PDF, rendered by pdftoppm in bounded child processes. It
 * has no routes of its own (convert serves `to=png|jpeg`); it brings its settings and the engine task that
 * reads page sizes before rendering.
 */
import { Type } from '@fastify/type-provider-typebox';
import { Setting } from '../config/index.js';
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

const MB = 1024 * 1024;

export const previewSettings = Type.Object({
  /**
   * Pixels one preview page image may have (PREVIEW_MAX_MEGAPIXELS × 10⁶), checked before rendering; beyond: 422.
   * 50 MP: an A4 page at the largest width (4000 × 5657 px) is 23 MP, a 1:3 strip 48 MP (~200 MB of bitmap).
   */
  previewMaxPixels: Setting.integer('PREVIEW_MAX_MEGAPIXELS', { default: 50, minimum: 1, maximum: 1000, scale: 1_000_000 }),
  /**
   * Address-space cap of one pdftoppm process (PREVIEW_MEMORY_MB, bytes); an allocation beyond it fails: 422.
   * pdftoppm maps ~100 MB of code and fonts; a 50 MP page needs ~210 MB resident. 1 GB leaves room for
   * large embedded images while renders (at most OFFICE_WORKERS at once) stay far from the machine's memory.
   */
  previewMemoryBytes: Setting.integer('PREVIEW_MEMORY_MB', { default: 1024, minimum: 128, maximum: 65_536, scale: MB }),
});

declare module '../config/index.js' {
  interface ModuleSettings {
    preview: typeof previewSettings;
  }
}

export default {
  id: 'preview',
  settings: previewSettings,
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['preview.pageSizes'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
} satisfies Module;
