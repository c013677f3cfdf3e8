// Engine worker entry when Folio runs from TypeScript source (tsx, vitest): a worker thread does not
// inherit the parent's loader, so tsx is registered here before the worker module is imported. The
// compiled build loads dist/src/engines/worker.js directly and never uses this file.
import { register } from 'tsx/esm/api';

register();
const worker = await import('./worker.ts');
export default worker.default;
