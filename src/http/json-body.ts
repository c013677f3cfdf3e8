/**
 * JSON body parsing with a nesting bound. JSON.parse itself copes with deep input, but everything that walks
 * the result afterwards (schema validation, engines) recurses, so deeply nested bodies are refused up front
 * with one linear scan.
 */
import { FolioError } from '../errors.js';

export const MAX_JSON_DEPTH = 64;

/**
 * Values (objects, arrays and the elements and members they separate) a body may hold. JSON.parse, schema
 * validation and the prototype-key walk all run on the event loop and cost per value, so a body of a few
 * MB of `{},{},{}` would stall every other request for seconds; 500,000 is above what any operation needs
 * (annotate's 200,000 table cells per request, sign's 25,000 audit events) and parses in tens of ms.
 */
export const MAX_JSON_VALUES = 500_000;

export interface JsonShape {
  /** Deepest array/object nesting (the scan stops once it passes the depth limit). */
  depth: number;
  /** Opening brackets plus separators: an upper bound of the values (stops past the value limit). */
  values: number;
}

/**
 * One linear scan of the body, ignoring brackets inside strings. Strings are skipped with indexOf, so a
 * 33 MB base64 document costs a native memchr, not a loop per character.
 */
export function jsonShape(text: string, depthLimit = MAX_JSON_DEPTH, valueLimit = MAX_JSON_VALUES): JsonShape {
  let depth = 0;
  let max = 0;
  let values = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      // A quote preceded by an odd run of backslashes is escaped: keep looking.
      while (end > 0) {
        let backslashes = 0;
        for (let k = end - 1; k > i && text.charCodeAt(k) === 0x5c; k--) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end < 0) break; // unterminated: JSON.parse reports it
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      values++;
      depth++;
      if (depth > max) {
        max = depth;
        if (max > depthLimit) break;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c /* , */) values++;
    if (values > valueLimit) break;
  }
  return { depth: max, values };
}

/** Depth of the deepest array/object nesting, ignoring brackets inside strings; stops at `limit + 1`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  return jsonShape(text, limit, Number.POSITIVE_INFINITY).depth;
}

/**
 * The path of the first key through which a later merge or assignment could reach a prototype, or undefined.
 * JSON.parse itself makes such keys plain own properties; the danger is code that copies them. Refused:
 * `__proto__` anywhere, and `constructor` when it is an object holding a `prototype` key (the two routes to
 * Object.prototype). Any other `constructor` is ordinary data (an audit trail may well name one).
 */
export function prototypeKey(value: unknown): string | undefined {
  // Iterative: the depth is already bounded, but nothing here should recurse on client data. Paths are
  // built only for a hit: one string per value would double the cost of a large body.
  interface Frame {
    node: object;
    parent?: Frame;
    key?: string | number;
  }
  const pathOf = (frame: Frame, last: string): string => {
    const keys: Array<string | number> = [last];
    for (let f: Frame | undefined = frame; f?.parent; f = f.parent) keys.push(f.key!);
    keys.reverse();
    return keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
  };
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Frame[] = [{ node: value }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        const child: unknown = node[i];
        if (child !== null && typeof child === 'object') stack.push({ node: child, parent: frame, key: i });
      }
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      if (key === '__proto__') return pathOf(frame, key);
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.prototype.hasOwnProperty.call(child, 'prototype')) {
        return pathOf(frame, 'constructor.prototype');
      }
      if (child !== null && typeof child === 'object') stack.push({ node: child, parent: frame, key });
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
  const shape = jsonShape(text);
  if (shape.depth > MAX_JSON_DEPTH) {
    throw new FolioError('VALIDATION_ERROR', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      details: [{ field: 'body', issue: `nesting deeper than ${MAX_JSON_DEPTH}` }],
    });
  }
  if (shape.values > MAX_JSON_VALUES) {
    throw new FolioError('VALIDATION_ERROR', `The JSON body holds more than ${MAX_JSON_VALUES.toLocaleString('en')} values`, {
      details: [{ field: 'body', issue: `more than ${MAX_JSON_VALUES} values` }],
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
