/**
 * TeX math → a Word equation in the paragraph being written: read by src/docx/math/tex-read.ts, written as
 * OMML by src/docx/wordml/math.ts. Shared by the Markdown writer (`$…$` tokens, markdown-math.ts) and the HTML
 * walk (`<span class="math inline">\(…\)</span>`, as pandoc and Folio's Markdown renderer write math).
 * Bounded: each equation's source is at most MAX_MATH_SOURCE characters (longer ones stay text), and its nodes
 * at most that many.
 */
import { FolioError } from '../errors.js';
import { readTex } from '../docx/math/tex-read.js';
import { equationOmml } from '../docx/wordml/math.js';
import type { Ctx, WordWriter } from '../docx/wordml/writer.js';
import { MAX_MATH_SOURCE } from './markdown-math.js';

/** Writes TeX as an equation; text when it is too long or holds nothing an equation can show. */
export function addTex(w: WordWriter, tex: string, display: boolean, ctx: Ctx): void {
  if (tex.length > MAX_MATH_SOURCE) {
    w.addText(display ? `$$${tex}$$` : `$${tex}$`, ctx);
    return;
  }
  let nodes = 0;
  const row = readTex(tex, {
    count: () => {
      // Each node comes from at least one character of the source: a bound that cannot be reached, kept so a
      // change to the reader cannot make one equation unbounded.
      if (++nodes > MAX_MATH_SOURCE * 4) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'An equation is too large to convert');
    },
  });
  if (row.length) w.addMath(equationOmml({ display, row }), ctx);
}

/** `\(…\)` or `\[…\]` (or bare TeX) of an HTML math span as an equation; false when it is none. */
export function addTexMath(w: WordWriter, text: string, ctx: Ctx): boolean {
  const t = text.trim();
  const m = /^\\\(([\s\S]*)\\\)$/.exec(t) ?? /^\\\[([\s\S]*)\\\]$/.exec(t);
  if (!m || !m[1]!.trim()) return false;
  addTex(w, m[1]!, t.startsWith('\\['), ctx);
  return true;
}
