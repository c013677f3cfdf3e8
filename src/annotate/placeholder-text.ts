/**
 * `{{name}}` placeholders as text: finding one in a paragraph whose text Word split over several runs (spell
 * checking, formatting, revisions split them anywhere), and replacing exactly its characters. The runs the
 * placeholder spans are isolated first (split at its start and end, each half keeping the run's
 * properties), so the text around it keeps its own runs and formatting.
 */
import { paragraphSegments } from './fields.js';
import { needsTrailingParagraph, replaceParagraphContent, type Produced } from './runs.js';
import {
  child,
  childElements,
  clone,
  el,
  escapeText,
  insertAfter,
  insertBefore,
  removeAll,
  replaceWith,
  setAttr,
  setText,
  type XElement,
} from '../docx/xml.js';

export function placeholderRegex(name: string): RegExp {
  return new RegExp(`\\{\\{\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\}\\}`, 'u');
}

export function paragraphText(p: XElement): string {
  return paragraphSegments(p)
    .map((s) => s.text)
    .join('');
}

/**
 * Moves the children of `run` from index `from` on into a new run right after it, with the same attributes
 * and a copy of its properties: both halves look as the run did.
 */
function moveTailToNewRun(run: XElement, from: number): XElement {
  const rPr = child(run, 'w:rPr');
  const copy = el(
    run.name,
    run.attrs.map(([k, v]) => [k, v]),
    [...(rPr ? [clone(rPr)] : []), ...run.children.slice(from)],
  );
  run.children = run.children.slice(0, from);
  insertAfter(run, [copy]);
  return copy;
}

/** Moves everything after `node` in its run into a new run (same properties) right after it. */
function splitRunAfter(run: XElement, node: XElement): XElement | undefined {
  const i = run.children.indexOf(node);
  if (!run.children.slice(i + 1).some((c) => c.type === 'el')) return undefined;
  return moveTailToNewRun(run, i + 1);
}

/** Moves `node` and everything after it into a new run right after, when something else precedes it. */
function splitRunBefore(run: XElement, node: XElement): void {
  const i = run.children.indexOf(node);
  const before = run.children.slice(0, i).filter((c) => c.type === 'el' && c.name !== 'w:rPr');
  if (!before.length) return;
  moveTailToNewRun(run, i);
}

/** Splits the text of a w:t at `offset`: the second half goes into its own w:t right after. */
function splitText(t: XElement, text: string, offset: number): XElement {
  setText(t, text.slice(0, offset));
  setAttr(t, 'xml:space', 'preserve');
  const second = el('w:t', [['xml:space', 'preserve']], [{ type: 'text', raw: escapeText(text.slice(offset)) }]);
  insertAfter(t, [second]);
  return second;
}

/**
 * Replaces the first `{{name}}` of the paragraph with what `build` makes from the first run's rPr. The runs
 * the placeholder spans are isolated (split at its start and end), then removed; the new content goes where
 * the first one was. Returns false when the paragraph has no such placeholder.
 */
export function replacePlaceholderOnce(p: XElement, name: string, build: (rPr: XElement | undefined) => Produced): boolean {
  const m = placeholderRegex(name).exec(paragraphText(p));
  return m ? replacePlaceholderAt(p, m.index, m.index + m[0].length, build) : false;
}

/** Replaces the placeholder text at [ms, me) of the paragraph's joined text (see replacePlaceholderOnce). */
export function replacePlaceholderAt(p: XElement, ms: number, me: number, build: (rPr: XElement | undefined) => Produced): boolean {
  let segs = paragraphSegments(p);
  const text = segs.map((s) => s.text).join('');
  if (me > text.length || ms >= me) return false;
  const m = [text.slice(ms, me)];
  // Isolate the end.
  const endSeg = segs.find((s) => s.start < me && s.start + s.text.length >= me)!;
  const endOff = me - endSeg.start;
  if (endOff < endSeg.text.length) splitText(endSeg.t, endSeg.text, endOff);
  splitRunAfter(endSeg.run, endSeg.t);
  // Isolate the start.
  segs = paragraphSegments(p);
  const startSeg = segs.find((s) => s.start <= ms && s.start + s.text.length > ms)!;
  const startOff = ms - startSeg.start;
  let startT = startSeg.t;
  if (startOff > 0) startT = splitText(startSeg.t, startSeg.text, startOff);
  splitRunBefore(startT.parent!, startT);
  segs = paragraphSegments(p);
  const matched = segs.filter((s) => s.start >= ms && s.start + s.text.length <= me && s.text.length > 0);
  const runs = [...new Set(matched.map((s) => s.run))];
  const first = runs[0]!;
  const produced = build(child(first, 'w:rPr'));
  const whole = text.trim() === m[0] && p.parent !== undefined;
  if (produced.block?.length && whole) {
    const block = [...produced.block];
    if (needsTrailingParagraph(p.parent!, block) && childElements(p.parent!, 'w:p').length === 1) block.push(el('w:p'));
    const pPr = child(p, 'w:pPr');
    // A paragraph that only held the placeholder gives way to the block content.
    if (pPr && child(pPr, 'w:sectPr')) {
      // The paragraph carries a section break: keep it, empty, after the new content.
      replaceParagraphContent(p, []);
      insertBefore(p, block);
    } else replaceWith(p, block);
    return true;
  }
  insertBefore(first, produced.inline);
  removeAll(runs);
  return true;
}
