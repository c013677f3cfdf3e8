/** Request budgets shared by every capability: one deadline per request, one output budget per request, admission to workers. */
export { Deadline } from './deadline.js';
export { OutputBudget, outputTooLarge } from './output.js';
export { AdmissionQueue, Semaphore, abandonedError, type AdmissionQueueOptions, type WaitOptions } from './queue.js';
