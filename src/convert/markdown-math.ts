/**
 * TeX math in Markdown, as pandoc's `tex_math_dollars` reads it (and GitHub, KaTeX and MathJax write it):
 * `$…$` is inline math when the opening `$` has a non-space character right after it, the closing `$` a
 * non-space character right before it and no digit right after it (so "$5 and $10" stays text); `$$…$$` is
 * display math (it may span lines of a paragraph). A backslash-escaped `\$` is a dollar sign. The token is
 * `math_inline` (`meta.display` for `$$`); rendered to HTML as pandoc writes it (`<span class="math inline">\(…\)</span>`,
 * `display` with `\[…\]`), and written to Word as an equation by markdown-docx.ts (src/docx/math/tex-read.ts).
 *
 * Linear: an inline `$` looks for the next `$` only, a `$$` for the next `$$` within MAX_MATH_SOURCE characters
 * (and not at all once a search found none to the end of the paragraph).
 */
import type { MarkdownItInstance } from './markdown.js';

/** The longest equation source read as math (a closing `$` further away is not looked for). */
export const MAX_MATH_SOURCE = 8192;

interface InlineState {
  src: string;
  pos: number;
  posMax: number;
  push(type: string, tag: string, nesting: number): { content: string; meta: unknown; markup: string };
}

/** Per inline parse: the position from which no closing `$$` follows (searches from later starts end at once). */
const noDisplayCloser = new WeakMap<object, number>();

function mathRule(state: InlineState, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x24 /* $ */) return false;
  const display = src.charCodeAt(start + 1) === 0x24;
  const open = display ? 2 : 1;
  const limit = Math.min(state.posMax, start + open + MAX_MATH_SOURCE);
  let end = -1;
  if (display) {
    const none = noDisplayCloser.get(state);
    if (none !== undefined && none <= start) return false;
    for (let k = start + 2; k < limit - 1; k++) {
      const c = src.charCodeAt(k);
      if (c === 0x5c /* \ */) k++;
      else if (c === 0x24 && src.charCodeAt(k + 1) === 0x24) {
        end = k;
        break;
      }
    }
    if (end < 0 && limit === state.posMax) noDisplayCloser.set(state, start);
    if (end < 0 || !src.slice(start + 2, end).trim()) return false;
  } else {
    // The closing `$` is the next unescaped one: each search ends at the next `$`, so all of them together
    // read the text once.
    const first = src[start + 1];
    if (first === undefined || /\s/.test(first)) return false;
    for (let k = start + 1; k < limit; k++) {
      const c = src.charCodeAt(k);
      if (c === 0x5c) k++;
      else if (c === 0x24) {
        end = k;
        break;
      }
    }
    if (end < 0 || /\s/.test(src[end - 1]!) || /[0-9]/.test(src[end + 1] ?? '')) return false;
  }
  if (!silent) {
    const token = state.push('math_inline', 'math', 0);
    token.content = src.slice(start + open, end);
    token.meta = { display };
    token.markup = display ? '$$' : '$';
  }
  state.pos = end + open;
  return true;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Registers `$…$` / `$$…$$` math on a markdown-it instance. */
export function mathDollars(md: MarkdownItInstance): void {
  md.inline.ruler.after('escape', 'math_dollars', mathRule as never);
  md.renderer.rules.math_inline = (tokens, idx) => {
    const t = tokens[idx]!;
    const display = (t.meta as { display?: boolean } | null)?.display;
    return display
      ? `<span class="math display">\\[${escapeHtml(t.content)}\\]</span>`
      : `<span class="math inline">\\(${escapeHtml(t.content)}\\)</span>`;
  };
}
