/**
 * JSON body parsing with a nesting bound. JSON.parse itself copes with deep input, but everything that walks
 * the result afterwards (schema validation, engines) recurses, so deeply nested bodies are refused up front
 * with one linear scan.
 */
import { FolioError } from '../errors.js';

export const MAX_JSON_DEPTH = 64;

/** Depth of the deepest array/object nesting, ignoring brackets inside strings; stops at `limit + 1`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') {
    throw new FolioError('VALIDATION_ERROR', 'The request body is empty; a JSON object is expected', {
      details: [{ field: 'body', issue: 'empty' }],
    });
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new FolioError('VALIDATION_ERROR', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      details: [{ field: 'body', issue: `nesting deeper than ${MAX_JSON_DEPTH}` }],
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new FolioError('VALIDATION_ERROR', 'The request body is not valid JSON', {
      details: [{ field: 'body', issue: (e as Error).message }],
    });
  }
  // Prototype pollution guard: these keys are never meaningful in our API.
  if (/"(__proto__|constructor)"\s*:/.test(text)) {
    throw new FolioError('VALIDATION_ERROR', 'The JSON body contains a forbidden key', {
      details: [{ field: 'body', issue: '__proto__ or constructor key' }],
    });
  }
  return value;
}
