/** Request budgets shared by every capability: one deadline per request, one output budget per request. */
export { Deadline } from './deadline.js';
export { OutputBudget, outputTooLarge } from './output.js';
