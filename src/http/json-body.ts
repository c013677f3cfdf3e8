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

/**
 * The path of the first key through which a later merge or assignment could reach a prototype, or undefined.
 * JSON.parse itself makes such keys plain own properties; the danger is code that copies them. Refused:
 * `__proto__` anywhere, and `constructor` when it is an object holding a `prototype` key (the two routes to
 * Object.prototype). Any other `constructor` is ordinary data (an audit trail may well name one).
 */
export function prototypeKey(value: unknown): string | undefined {
  // Iterative: the depth is already bounded, but nothing here should recurse on client data.
  const stack: Array<[unknown, string]> = [[value, 'body']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}[${i}]`]);
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const at = path === 'body' ? key : `${path}.${key}`;
      if (key === '__proto__') return at;
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.prototype.hasOwnProperty.call(child, 'prototype')) {
        return `${at}.prototype`;
      }
      if (child !== null && typeof child === 'object') stack.push([child, at]);
    }
  }
  return undefined;
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
  // Prototype pollution guard on the parsed value (so escaped spellings such as "\u005f_proto__" count too).
  const bad = prototypeKey(value);
  if (bad) {
    throw new FolioError('VALIDATION_ERROR', 'The JSON body contains a forbidden key', {
      details: [{ field: bad, issue: bad.endsWith('__proto__') ? '__proto__ key' : 'constructor.prototype key' }],
    });
  }
  return value;
}
