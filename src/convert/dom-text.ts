/** Reading text and elements out of an htmlparser2 DOM without recursion (safe for 100,000-deep trees). */
import type { AnyNode, Element } from 'domhandler';

/** Text content, leaving out nested scripts and styles. */
export function textOf(root: Element): string {
  let out = '';
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'text') out += (n as unknown as { data: string }).data;
    else if ('children' in n && (n === root || ((n as Element).name !== 'script' && (n as Element).name !== 'style'))) {
      const kids = (n as Element).children;
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
    }
  }
  return out;
}

/** The outermost descendants matching `pred` (a match's own descendants are not searched). */
export function collect(root: Element, pred: (e: Element) => boolean, out: Element[]): void {
  const stack: AnyNode[] = [...root.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type !== 'tag') continue;
    const e = n as Element;
    if (pred(e)) out.push(e);
    else for (const c of e.children) stack.push(c);
  }
}
