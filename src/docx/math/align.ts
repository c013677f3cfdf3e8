/**
 * The alignment points of an equation array's row: OMML marks them with '&' in a run's text (ECMA-376
 * §22.1.2.34), which TeX's aligned environment and MathML's table cells take as column breaks.
 */
import type { MathRow } from './ast.js';

/** A row cut at the '&' of its top-level runs (the '&' removed); one cell when it has none. */
export function splitAlignment(row: MathRow): MathRow[] {
  const cells: MathRow[] = [[]];
  for (const n of row) {
    if (n.k !== 'run' || n.normal || !n.text.includes('&')) {
      cells[cells.length - 1]!.push(n);
      continue;
    }
    const parts = n.text.split('&');
    parts.forEach((text, i) => {
      if (i > 0) cells.push([]);
      if (text) cells[cells.length - 1]!.push({ ...n, text });
    });
  }
  return cells;
}
