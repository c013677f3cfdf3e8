/**
 * The pictures of a document model as the DOCX → Markdown/HTML writers write them: each picture's data URI is
 * encoded once (the reader hands out one ImageData per image part, however many times the document shows it),
 * and every place that writes it out again is charged to the output budget when it does (output-sink.ts).
 *
 * How a picture shown many times is written (one image part can be referenced from thousands of places, and
 * the read's 20 MB image budget bounds the distinct pictures, not their copies):
 * - Markdown: a picture shown more than once is a reference-style image, `![alt][folio-image-1]`, with one
 *   `[folio-image-1]: data:…` definition at the end of the document: its data is written once. A picture
 *   shown once stays inline `![alt](data:…)`, as before.
 * - HTML: an <img> cannot point at another element's data without a script (the answer is served with a CSP
 *   that forbids scripts and is opened by tools that run none). An SVG `<use>` of one `<image>` would render,
 *   but it is not an <img>: no alt text for readers and editors, and HTML → DOCX tools ignore it. So each
 *   repeat writes the data URI again, and each repeat counts its full size against OUTPUT_MAX_MB: a document
 *   multiplying a picture past the limit gets the 422 at the limit, while it is written.
 * - Pictures inside Markdown's HTML tables (merged cells) and pictures of kinds Markdown renderers do not show
 *   as images (written as <img>) are HTML, so they are counted as HTML repeats are.
 */
import type { Block, DocModel, ImageData, Inline } from '../docx/read/model.js';
import type { TextSink } from './output-sink.js';

export class DocxImages {
  private readonly uris = new Map<ImageData, string>();

  constructor(private readonly sink: TextSink) {}

  /** The data URI of `data` (encoded on first use), without counting it: the caller writes it once. */
  uri(data: ImageData): string {
    let u = this.uris.get(data);
    if (u === undefined) {
      u = `data:${data.mime};base64,${Buffer.from(data.bytes.buffer, data.bytes.byteOffset, data.bytes.byteLength).toString('base64')}`;
      this.uris.set(data, u);
    }
    return u;
  }

  /** The data URI of `data` for one more place in the output: its bytes are counted now. */
  inline(data: ImageData): string {
    const u = this.uri(data);
    this.sink.precharge(u.length);
    return u;
  }
}

/** A repeated picture's reference definition: its label, and the title its uses agree on. */
interface Definition {
  label: string;
  title: string | undefined;
  mixed: boolean;
}

/**
 * Markdown's pictures: a picture shown once inline, a repeated one by reference (one definition each, at the
 * end). A definition has one title for every use: uses with different titles get none, with a warning.
 */
export class MarkdownImages {
  private readonly defs = new Map<ImageData, Definition>();
  private readonly prefix: string;

  constructor(
    readonly html: DocxImages,
    private readonly uses: Map<ImageData, number>,
    /** The document's kept Markdown (source blocks): a label they define would win over ours. */
    sources: string[],
  ) {
    // Labels match case-insensitively and with white space around them (CommonMark), never through
    // escapes or entities: a source that does not contain the prefix in any case cannot define our labels.
    let prefix = 'folio-image-';
    for (let n = 2; sources.some((s) => s.toLowerCase().includes(prefix)); n++) prefix = `folio-image${n}-`;
    this.prefix = prefix;
  }

  /**
   * What follows `![alt]` for one use of `data`: `(data:… "title")` for a picture shown once (counted now),
   * `[label]` for a repeated one. `title` is the written title (` "…"`, or '').
   */
  target(data: ImageData, title: string): string {
    if ((this.uses.get(data) ?? 0) < 2) return `(${this.html.inline(data)}${title})`;
    let d = this.defs.get(data);
    if (!d) this.defs.set(data, (d = { label: `${this.prefix}${this.defs.size + 1}`, title, mixed: false }));
    else if (d.title !== title) d.mixed = true;
    return `[${d.label}]`;
  }

  /** The reference definitions, one per repeated picture, each picture's data once (written by the caller). */
  definitions(warnings: Set<string>): string[] {
    const out: string[] = [];
    for (const [data, d] of this.defs) {
      if (d.mixed) warnings.add('a picture shown several times is written once in Markdown; the titles of its uses differed and were left out');
      out.push(`[${d.label}]: ${this.html.uri(data)}${d.mixed ? '' : d.title}`);
    }
    return out;
  }
}

/**
 * How many places of the Markdown show each picture (body and notes), to tell pictures shown once from
 * repeated ones, and the kept Markdown of source blocks. Not counted: a source block's content (its kept
 * Markdown is written instead) and code.
 */
export function imageUses(doc: DocModel): { uses: Map<ImageData, number>; sources: string[] } {
  const uses = new Map<ImageData, number>();
  const sources: string[] = [];
  const inlines = (list: Inline[]): void => {
    for (const i of list) {
      if (i.t === 'image' && i.data) uses.set(i.data, (uses.get(i.data) ?? 0) + 1);
      else if (i.t === 'link') inlines(i.children);
    }
  };
  // An explicit stack: the model nests as deep as the read allowed, and this walk must not be the deeper one.
  const stack: Block[][] = [doc.blocks, ...doc.notes.map((n) => n.blocks)];
  for (let list = stack.pop(); list; list = stack.pop()) {
    for (const b of list) {
      switch (b.t) {
        case 'para':
        case 'heading':
          inlines(b.inlines);
          break;
        case 'quote':
          stack.push(b.blocks);
          break;
        case 'list':
          for (const it of b.items) stack.push(it.blocks);
          break;
        case 'table':
          for (const r of b.rows) for (const c of r.cells) stack.push(c.blocks);
          break;
        case 'source':
          sources.push(b.markdown);
          break;
        case 'code':
        case 'hr':
          break;
      }
    }
  }
  return { uses, sources };
}
