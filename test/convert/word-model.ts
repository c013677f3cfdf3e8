/**
 * The "Word-level" document model both sides of the conformance suite are reduced to: what a Word document
 * can express of a Markdown rendering, and nothing a reader of the DOCX could not see.
 *
 * - Blocks in reading order: paragraph, heading (level 1–6), code block (verbatim text), thematic break,
 *   table (rows of cells, header rows, cell alignment).
 * - Each block carries its block-quote depth, its list path (per enclosing list level: bullet, or ordered with
 *   the ordinal the reader would see) and whether it is the item's numbered paragraph or a continuation, and
 *   whether it lives in the body or in the n-th footnote.
 * - Inline content is text with marks: bold, italic, code, strike, link target; plus line breaks and footnote
 *   references.
 *
 * `canonical()` turns blocks into one string per block, so a failed comparison prints as a readable diff.
 */
import { domainToUnicode } from 'node:url';

export type Mark = 'b' | 'i' | 'code' | 's';

/** A piece of inline content; `br` is a line break, `note` a footnote reference. */
export interface Span {
  text: string;
  marks: ReadonlySet<Mark>;
  href?: string;
  note?: boolean;
  br?: boolean;
}

export const BREAK: Span = { text: '', marks: new Set(), br: true };

export interface ListLevel {
  kind: 'o' | 'u';
  /** The number an ordered item shows (undefined for bullets). */
  ordinal?: number;
}

export interface Cell {
  align: '' | 'center' | 'right' | 'justify';
  spans: Span[];
}

export interface Row {
  header: boolean;
  cells: Cell[];
}

export interface Block {
  kind: 'p' | 'h' | 'code' | 'hr' | 'table';
  /** Heading level 1–6. */
  level?: number;
  quote: number;
  list: ListLevel[];
  /** The first paragraph of a list item (the one that shows the bullet or number). */
  head: boolean;
  /** 0 in the body, n in the n-th footnote (in order of reference). */
  note: number;
  spans?: Span[];
  /** Code block text, lines separated by '\n'. */
  text?: string;
  rows?: Row[];
}

const WS = /[ \t\n\r\f]+/g;
const MARK_ORDER: Mark[] = ['b', 'i', 's', 'code'];

/** Normalises a URL for comparison: percent-encoding and its decoded form name the same resource. */
export function normalizeHref(href: string): string {
  let h = href.trim();
  // An internationalised host and its punycode (xn--) form are the same address.
  if (h.includes('xn--')) {
    try {
      const u = new URL(h);
      h = h.replace(u.hostname, domainToUnicode(u.hostname));
    } catch {
      /* not absolute: keep */
    }
  }
  try {
    h = decodeURI(h);
  } catch {
    /* keep as is */
  }
  return h;
}

/**
 * Inline spans → a canonical string. White space is collapsed as HTML renders it (runs of ASCII white space are
 * one space; none at the edges of a block or around a line break), and a space carries no marks (an italic
 * space and a roman one look alike). Every other character carries its marks and link target.
 */
export function inlineKey(spans: readonly Span[]): string {
  interface Tok {
    ch: string;
    key: string;
  }
  const toks: Tok[] = [];
  for (const s of spans) {
    if (s.note) {
      toks.push({ ch: '[^]', key: '' });
      continue;
    }
    if (s.br) {
      toks.push({ ch: '\n', key: '' });
      continue;
    }
    const marks = MARK_ORDER.filter((m) => s.marks.has(m)).join(',');
    const key = s.href !== undefined ? `${marks}${marks ? ',' : ''}a=${normalizeHref(s.href)}` : marks;
    for (const ch of s.text.replace(WS, ' ')) toks.push({ ch, key: ch === ' ' ? '' : key });
  }
  // Collapse spaces; no space at the edges or next to a break; no breaks at the edges.
  const out: Tok[] = [];
  for (const t of toks) {
    if (t.ch === ' ') {
      const prev = out[out.length - 1];
      if (!prev || prev.ch === ' ' || prev.ch === '\n') continue;
    }
    if (t.ch === '\n') while (out.length && out[out.length - 1]!.ch === ' ') out.pop();
    out.push(t);
  }
  while (out.length && (out[out.length - 1]!.ch === ' ' || out[out.length - 1]!.ch === '\n')) out.pop();
  while (out.length && out[0]!.ch === '\n') out.shift();
  let s = '';
  let open = '';
  for (const t of out) {
    if (t.ch === ' ' || t.ch === '\n') {
      if (open) s += '⟧';
      open = '';
      s += t.ch === '\n' ? '⏎' : ' ';
      continue;
    }
    if (t.key !== open) {
      if (open) s += '⟧';
      if (t.key) s += `⟦${t.key}|`;
      open = t.key;
    }
    s += t.ch;
  }
  if (open) s += '⟧';
  return s;
}

function listKey(list: readonly ListLevel[], head: boolean): string {
  if (!list.length) return '';
  return ` list=${list.map((l) => (l.kind === 'o' ? `o${l.ordinal ?? '?'}` : 'u')).join('/')}${head ? '#' : '+'}`;
}

/** One line per block. */
export function canonical(blocks: readonly Block[]): string[] {
  return blocks.map((b) => {
    let head = b.kind === 'h' ? `h${b.level}` : b.kind;
    if (b.note) head += ` note=${b.note}`;
    if (b.quote) head += ` quote=${b.quote}`;
    head += listKey(b.list, b.head);
    switch (b.kind) {
      case 'hr':
        return head;
      case 'code':
        return `${head}: ${JSON.stringify(b.text ?? '')}`;
      case 'table':
        return `${head}: ${(b.rows ?? [])
          .map((r) => `${r.header ? 'H' : 'R'}[${r.cells.map((c) => `${c.align ? `${c.align}:` : ''}${inlineKey(c.spans)}`).join(' ‖ ')}]`)
          .join(' ')}`;
      default:
        return `${head}: ${inlineKey(b.spans ?? [])}`;
    }
  });
}

export const NO_MARKS: ReadonlySet<Mark> = new Set();
