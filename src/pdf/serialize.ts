/**
 * Writing PDF syntax: a parsed value (the reader's object model) back to bytes, and a chunked byte writer.
 * Used by the incremental writer's callers (DSS, document timestamps) and by `openForAuthoring` (authoring.ts).
 */
import type { PdfValue } from './objects.js';

/** Collects byte chunks (text is written as latin1) and joins them once. */
export class ChunkWriter {
  private readonly parts: Uint8Array[] = [];
  length = 0;
  text(s: string): void {
    this.bytes(Buffer.from(s, 'latin1'));
  }
  bytes(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }
  join(): Uint8Array {
    return Buffer.concat(this.parts, this.length);
  }
}

/** PDF syntax for a parsed value (the reader caps nesting at parse time, so the recursion is bounded). */
export function serialize(v: PdfValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatNumber(v);
  if (Array.isArray(v)) return `[${v.map(serialize).join(' ')}]`;
  switch (v.kind) {
    case 'name':
      return `/${v.name.replace(/[^!-~]|[#()<>[\]{}/%]/g, (c) => `#${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;
    case 'string':
      return `<${Buffer.from(v.bytes).toString('hex')}>`;
    case 'ref':
      return `${v.num} ${v.gen} R`;
    case 'dict':
      return `<<${[...v.map].map(([k, x]) => `${serialize({ kind: 'name', name: k })} ${serialize(x)}`).join(' ')}>>`;
    case 'stream':
      // A stream is always an indirect object's top-level value; inside another value it cannot occur.
      return 'null';
  }
  return 'null';
}

/** PDF numbers have no exponent notation. */
function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return '0';
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? n.toFixed(0) : '0';
  const s = n.toFixed(10).replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
}
