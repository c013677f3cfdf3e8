/**
 * Footnotes in HTML: a footnote section (markdown-it-footnote's <section class="footnotes">, pandoc's
 * role="doc-endnotes") is not written where it stands; each reference to one of its items becomes a Word
 * footnote holding a copy of that item, without its back-references.
 */
import type { AnyNode, Element } from 'domhandler';
import { copyPara } from '../docx/wordml/paragraph-props.js';
import { decodeURIComponentSafe } from '../docx/wordml/relationships.js';
import { copyCtx, HAS_CONTENT, rootCtx, type Ctx } from '../docx/wordml/writer.js';
import { collect } from './dom-text.js';
import type { HtmlConverter } from './html-walker.js';

/** How deep notes may reference notes (a note citing itself would otherwise never end). */
const MAX_NOTE_NESTING = 2;

/** Whether an element holds a document's footnotes. Only section, div and aside can. */
export function isFootnoteContainer(el: Element): boolean {
  if (el.name !== 'section' && el.name !== 'div' && el.name !== 'aside') return false;
  const cls = ` ${el.attribs.class ?? ''} `; // only for these three: a string per element adds up
  return cls.includes(' footnotes ') || el.attribs.role === 'doc-endnotes' || el.attribs.id === 'footnotes';
}

/** The notes of the containers, by the id references point at. */
export function footnoteTargets(containers: Element[]): Map<string, Element> {
  const targets = new Map<string, Element>();
  for (const container of containers) {
    const items: Element[] = [];
    collect(container, (e) => e.name === 'li' && !!e.attribs.id, items);
    for (const li of items) targets.set(li.attribs.id!, li);
  }
  return targets;
}

/** A footnote reference (markdown-it-footnote or pandoc HTML): emits a Word footnote. Returns false when not one. */
export function footnoteRef(conv: HtmlConverter, el: Element, ctx: Ctx): boolean {
  if (!conv.footnoteTargets.size) return false;
  let a: Element | undefined = el;
  if (el.name === 'sup') {
    const only = el.children.filter((c) => c.type === 'tag') as Element[];
    if (only.length !== 1 || only[0]!.name !== 'a') return false;
    a = only[0];
  }
  const cls = ` ${el.attribs.class ?? ''} ${a!.attribs.class ?? ''} `;
  const isRef = cls.includes(' footnote-ref ') || a!.attribs.role === 'doc-noteref';
  const href = a!.attribs.href ?? '';
  if (!isRef || !href.startsWith('#')) return false;
  const li = conv.footnoteTargets.get(decodeURIComponentSafe(href.slice(1)));
  if (!li || conv.footnoteDepth > MAX_NOTE_NESTING) return false;
  conv.w.footnote(ctx, () => {
    conv.footnoteDepth++;
    const notePara = copyPara(undefined);
    notePara.style = 'FootnoteText';
    const noteCtx = rootCtx(notePara, 10, conv.opts.textWidthTwips);
    for (const child of withoutBackrefs(li)) {
      if (child.type === 'tag' && (child as Element).name === 'p') {
        conv.w.flush();
        const pctx = copyCtx(noteCtx);
        for (const c of withoutBackrefs(child as Element)) conv.walk(c, pctx, 1);
        conv.w.flush();
      } else conv.walk(child, noteCtx, 1);
    }
    conv.footnoteDepth--;
  });
  return true;
}

function isBackref(el: Element): boolean {
  const cls = ` ${el.attribs.class ?? ''} `;
  return el.name === 'a' && (cls.includes(' footnote-backref ') || cls.includes(' footnote-back ') || el.attribs.role === 'doc-backlink');
}

// A note's children without its back-references: markdown-it-footnote writes one back-reference (and a
// space) per reference, so a note cited n times holds n of them, and skipping them on each of the n
// renderings was n². The spaces left between them collapse to one (notes are never preformatted here:
// the walk gives them a fresh context), so runs of white-space-only text keep their first node only.
const noteChildren = new WeakMap<Element, AnyNode[]>();

function withoutBackrefs(el: Element): AnyNode[] {
  let kids = noteChildren.get(el);
  if (!kids) {
    kids = [];
    let lastWhite = false;
    for (const c of el.children) {
      if (c.type === 'tag' && isBackref(c as Element)) continue;
      const white = c.type === 'text' && !HAS_CONTENT.test(c.data);
      if (white && lastWhite) continue;
      lastWhite = white;
      kids.push(c);
    }
    noteChildren.set(el, kids);
  }
  return kids;
}
