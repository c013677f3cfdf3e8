/**
 * htmlparser2 keeps its open-element stack with Array.unshift, so a 100,000-deep document costs O(n²) to
 * parse (seconds to minutes). This linear pre-pass removes start tags that would open beyond MAX_OPEN
 * elements (and their end tags), so the words stay and the structure past the bound is flattened.
 * It runs only when a cheap first scan finds such depth; normal documents pass through untouched.
 */
const MAX_OPEN = 1000;
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'keygen', 'command', 'basefont', 'frame', 'isindex']);
// Start tags that close an open element of the same name (browser "implied end tags"), so sibling
// <li>/<p>/<td> without end tags do not count as nesting.
const SELF_CLOSING_SIBLINGS = new Set(['li', 'p', 'td', 'th', 'tr', 'dt', 'dd', 'option', 'thead', 'tbody', 'tfoot']);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)(?:\s[^>]*)?(\/?)>|<!--[\s\S]*?-->|<(script|style|textarea|title)\b[^>]*>[\s\S]*?<\/\4\s*>/g;

export function boundHtmlDepth(html: string): string {
  if (!exceeds(html)) return html;
  const stack: string[] = [];
  const dropped = new Map<string, number>();
  return html.replace(TAG, (whole, slash: string | undefined, rawName: string | undefined, selfClose: string | undefined) => {
    if (!rawName) return whole; // comment or raw-text element: untouched
    const name = rawName.toLowerCase();
    if (VOID.has(name) || selfClose) return whole;
    if (!slash) {
      if (SELF_CLOSING_SIBLINGS.has(name) && stack[stack.length - 1] === name) stack.pop();
      if (stack.length >= MAX_OPEN) {
        dropped.set(name, (dropped.get(name) ?? 0) + 1);
        return ' ';
      }
      stack.push(name);
      return whole;
    }
    if (stack[stack.length - 1] === name) {
      stack.pop();
      return whole;
    }
    const d = dropped.get(name) ?? 0;
    if (d > 0) {
      dropped.set(name, d - 1);
      return ' ';
    }
    for (let i = stack.length - 1; i >= Math.max(0, stack.length - 64); i--) {
      if (stack[i] === name) {
        stack.length = i;
        break;
      }
    }
    return whole;
  });
}

function exceeds(html: string): boolean {
  let depth = 0;
  let last = '';
  TAG.lastIndex = 0;
  for (let m = TAG.exec(html); m; m = TAG.exec(html)) {
    const name = m[2]?.toLowerCase();
    if (!name || VOID.has(name) || m[3]) continue;
    if (m[1]) depth--;
    else if (!(SELF_CLOSING_SIBLINGS.has(name) && name === last)) {
      if (++depth > MAX_OPEN) return true;
    }
    last = m[1] ? '' : name;
  }
  return false;
}
