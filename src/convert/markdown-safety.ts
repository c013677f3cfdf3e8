/**
 * Markdown that Folio writes (DOCX → Markdown, docx-markdown.ts) is safe to render, by construction: what a
 * CommonMark renderer (markdown-it, commonmark.js, cmark-gfm, even with raw HTML on) and then a browser make of
 * it holds no script, no event handler and no link or image to a scheme that runs code or reaches local data.
 *
 * Link and image targets. A renderer decodes a destination before writing it (backslash escapes, HTML5 named
 * and numeric character references), and a browser ignores tabs, new lines and other controls inside a
 * scheme and its case; `[x](<&#106;avascript:…>)` is a javascript: link. So a target is judged as the
 * renderer and browser see it: written as is, after CommonMark's decoding, and with percent escapes decoded
 * as well (stricter than a browser, which never decodes a scheme: a target that only becomes unsafe that way
 * is odd enough to drop). The rule is the one the DOCX reader applies for the HTML writer
 * (src/docx/read/inlines.ts safeHref: no javascript:, vbscript:, data:, file:, blob:, livescript:, mocha:);
 * images are also allowed data: URIs of the raster types Markdown renderers show. An unsafe target is dropped
 * — the link becomes its text, the image its alt text — with a warning. A safe target is written so that no
 * renderer decodes it into something else: `\ & ( ) < > |` backslash-escaped (an escaped `&` is a literal
 * ampersand, never the start of a character reference; `|` would end a table cell), white space and controls
 * percent-encoded (what a renderer does with them anyway).
 *
 * Source islands (markdown-islands.ts): the Markdown a DOCX keeps for what Word cannot say, raw HTML
 * included, given back verbatim by DOCX → Markdown. Anyone can forge one (a Custom XML part and a content
 * control whose fingerprint matches its text), so an island's Markdown is only written when it is safe to
 * render; otherwise what Word shows for it is written instead (Folio's own, escaped Markdown), with a
 * warning. The choice, for a demanding user: a round trip of one's own Markdown keeps its harmless HTML (the
 * common case: <b>, <sup>, <div align>, <details>, tables, comments, anchors), and a document from anyone
 * never turns into active content when rendered. The API has no opt-in to pass unsafe HTML on: a DOCX says
 * nothing about who wrote its islands (md → docx is open to anyone too), and an opt-in would hand the
 * sanitising back to every caller that renders the answer. Library callers round-tripping Markdown they wrote
 * themselves may ask for the islands verbatim (docx-out.ts `trustIslands`; the spec round trip does). Folio's
 * HTML output has no sanitiser to share: it never writes an island's HTML (docx-html.ts), only what Word shows,
 * escaped; here the same content is the fallback. An island's Markdown is safe when
 * - every `<` that could open markup (in the source and in markdown-it's rendering of it) opens a complete,
 *   unambiguous tag (CommonMark's attribute grammar, ASCII white space, nothing HTML5 would read differently:
 *   no `<img/src=…>`, no value running into the next attribute), a comment that HTML5 ends where it seems to
 *   end, or a bogus comment (`<!…>`, `<?…>`) that ends at its first `>` as HTML5 ends it;
 * - every element is on an allow-list of inert formatting and structure elements, or is not an HTML element
 *   at all (an unknown or custom element is inert); never script, style, iframe, object, form controls
 *   (except a disabled-able checkbox), svg, math, base, meta, link or the raw-text elements;
 * - every attribute is on an allow-list (no on…, no srcdoc or formaction), URL attributes (href, src, cite)
 *   pass the target rule above after HTML5's decoding of the value, and style holds no url(), expression()
 *   or positioning;
 * - no unsafe scheme appears anywhere in the source, written as is or decoded (a belt for renderer
 *   differences: what markdown-it reads as text another renderer might read as a link or raw HTML);
 * - all kept islands together pass the rendering check as well (a link reference definition in one island is
 *   seen by the others), and none defines a label of the writer's own (`[folio-…]`, repeated pictures).
 * Islands are top-level blocks, at most the input's size together: each check is linear in them.
 */
import { Parser } from 'htmlparser2';
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import type { Block, DocModel, Inline } from '../docx/read/model.js';
import { safeHref } from '../docx/read/inlines.js';

export const UNSAFE_LINK_WARNING =
  'link(s) whose target a Markdown renderer would read as javascript:, vbscript:, data:, file: or blob: (after decoding character references) were dropped (their text kept)';
export const UNSAFE_IMAGE_WARNING = 'image(s) whose source is not a picture a Markdown renderer may show were dropped (their alt text kept)';
export const UNSAFE_ISLAND_WARNING =
  'block(s) of kept Markdown held HTML or link targets that are not safe to render (script, event handlers, unsafe schemes, elements outside the allow-list): what Word shows for them was written instead';

/** Data URIs a Markdown renderer shows as a picture (the kinds docx-markdown.ts writes as Markdown images). */
const RASTER_DATA = /^data:image\/(?:png|jpeg|gif|webp)(?:;[a-z0-9=.+-]*)*,/i;

/** `%XX` decoded to the byte's character (enough to read a scheme, which is ASCII). */
const percentDecode = (s: string) => s.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

/** Numeric character references, with or without `;` (HTML5 decodes `&#106avascript:` in an attribute). */
const numericDecode = (s: string) =>
  s.replace(/&#(?:x([0-9a-f]{1,8})|([0-9]{1,10}));?/gi, (m, hex: string | undefined, dec: string | undefined) => {
    const n = hex !== undefined ? parseInt(hex, 16) : Number(dec);
    return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\uFFFD';
  });

/** CommonMark's decoding of a destination or title: backslash escapes and character references. */
const commonMarkDecode = (s: string) => CHECKER.utils.unescapeAll(s);

/**
 * Whether a target, as written and as decoded by a renderer or browser, is safe; `image`: also raster data
 * URIs. The decodings (CommonMark's, HTML5's numeric references without `;`, percent escapes) are applied in
 * every order up to three deep: which one a pipeline applies first changes what `&#x3a&#x61;` becomes.
 */
export function safeTarget(target: string, kind: 'link' | 'image'): boolean {
  const forms = new Set([target]);
  let frontier = [target];
  for (let depth = 0; depth < 3 && frontier.length; depth++) {
    const next: string[] = [];
    for (const f of frontier) {
      for (const g of [commonMarkDecode(f), numericDecode(f), percentDecode(f)]) {
        if (!forms.has(g)) {
          forms.add(g);
          next.push(g);
        }
      }
    }
    frontier = next;
  }
  for (const form of forms) {
    // eslint-disable-next-line no-control-regex
    const t = form.replace(/[\u0000-\u0020\u007f]/g, '');
    // The page itself, or a place in it.
    if (t === '' || t.startsWith('#')) continue;
    if (kind === 'image' && RASTER_DATA.test(t)) continue;
    if (safeHref(form) === undefined) return false;
  }
  return true;
}

/**
 * A target as a CommonMark link destination that every renderer reads back as exactly `target` (see the
 * header); the empty target as `<>`.
 */
export function markdownDestination(target: string): string {
  if (target === '') return '<>';
  // eslint-disable-next-line no-control-regex
  return target.replace(/[\\&()<>|]/g, '\\$&').replace(/[\s\u0000-\u001f\u007f-\u009f]/gu, (c) => encodeURIComponent(c));
}

/**
 * A link title, in double quotes, read back as `title` (one line: a blank line would end the paragraph);
 * `&` and `|` escaped as in a destination.
 */
export function markdownTitle(title: string | undefined): string {
  if (!title) return '';
  return ` "${title.replace(/[ \t]*[\r\n\u2028\u2029]\s*/g, ' ').replace(/[\\"&|]/g, '\\$&')}"`;
}

// ---- raw HTML ----

/** Elements whose content and attributes (checked below) cannot run or load anything active. */
const ALLOWED_ELEMENTS = new Set(
  (
    'a abbr acronym address article aside b bdi bdo big blockquote br caption center cite code col colgroup data dd del ' +
    'details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hgroup hr i img input ins kbd label ' +
    'li main mark nav nobr ol p pre q rb rp rt rtc ruby s samp search section small span strike strong sub summary sup ' +
    'table tbody td tfoot th thead time tr tt u ul var wbr'
  ).split(' '),
);

/**
 * Every element name HTML gives a meaning (current and obsolete; svg and math switch to foreign content): one
 * not allowed above is refused. A name not here is an unknown or custom element, inert (HTMLUnknownElement).
 */
const HTML_ELEMENTS = new Set(
  (
    'applet area audio base basefont bgsound blink body button canvas datalist dialog dir embed fencedframe fieldset form ' +
    'frame frameset head html iframe image isindex keygen legend link listing map marquee math menu menuitem meta meter ' +
    'multicol nextid noembed noframes noscript object optgroup option output param picture plaintext portal progress ' +
    'script select selectedcontent slot source spacer style svg template textarea title track video xmp'
  ).split(' '),
);

/**
 * Attributes that run script, load or submit something, or change how the element is parsed or bound: never,
 * on any element (allowed elements have no other active attributes; an unknown element has none at all).
 */
const REFUSED_ATTRIBUTE =
  /^(?:on|xmlns|xlink:)|^(?:is|srcdoc|srcset|formaction|action|ping|http-equiv|codebase|classid|archive|poster|lowsrc|dynsrc|manifest|profile|usemap|autofocus)$/;
/** Attributes holding a URL: their value must pass the target rule. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'cite', 'longdesc', 'background', 'itemtype', 'itemid']);
/** CSS that can load something or lay an element over the page: never in a style attribute. */
const UNSAFE_CSS = /url\s*\(|image-set|image\s*\(|expression|@import|behavior|binding|javascript|position|\\|&|<|>/i;

// ASCII white space as HTML5 reads it (a no-break space is part of a name there, not a separator).
const WS = '[\\t\\n\\f\\r ]';
const ATTRIBUTE = `${WS}+[A-Za-z_:][A-Za-z0-9_.:-]*(?:${WS}*=${WS}*(?:[^\\t\\n\\f\\r "'=<>\`]+|'[^']*'|"[^"]*"))?`;
const OPEN_TAG = new RegExp(`<([A-Za-z][A-Za-z0-9-]*)(?=[\\t\\n\\f\\r />])((?:${ATTRIBUTE})*)${WS}*/?>`, 'y');
const CLOSE_TAG = new RegExp(`</([A-Za-z][A-Za-z0-9-]*)${WS}*>`, 'y');
// An HTML5 comment ends at the first `-->` or `--!>`; `<!-->` and `<!--->` are empty comments.
const COMMENT = /<!--(?:-?>|([\s\S]*?)-->)/y;
// `<!…>` and `<?…>` (declarations, CDATA, processing instructions) are bogus comments to the first `>`.
const BOGUS = /<[!?][^>]*>/y;
// Autolinks (CommonMark): never raw HTML to any renderer; their target is checked as a link's.
const AUTOLINK = /<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\t\n\f\r <>]*)>/y;
const EMAIL_AUTOLINK =
  /<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>/y;

// In Markdown source: a tag name (or end tag name) followed by what no CommonMark tag has next.
const NOT_A_TAG = /^<\/?[A-Za-z][A-Za-z0-9-]*(?![A-Za-z0-9-])(?![\t\n\f\r />]|$)/;
const AUTOLINK_START = /^<[A-Za-z][A-Za-z0-9+.-]{1,31}:/;

/** The attributes of one complete open tag as HTML5 decodes them (htmlparser2's attribute decoding). */
let parsed: Record<string, string> = {};
const TAG_PARSER = new Parser({ onopentag: (_name, attribs) => (parsed = attribs) }, { lowerCaseAttributeNames: true });
function attributesOf(tag: string): Record<string, string> {
  parsed = {};
  TAG_PARSER.reset();
  TAG_PARSER.end(tag);
  return parsed;
}

/** Why one open tag is not safe, or undefined. */
function tagProblem(name: string, tag: string): string | undefined {
  const element = name.toLowerCase();
  // Microdata's <meta itemprop content> is inert; a <meta> without itemprop may set a refresh or referrer.
  const microdata = element === 'meta' && /[\t\n\f\r ]itemprop[\t\n\f\r =]/i.test(tag) && !/[\t\n\f\r ](?:name|charset)[\t\n\f\r =]/i.test(tag);
  if (!ALLOWED_ELEMENTS.has(element) && HTML_ELEMENTS.has(element) && !microdata) return `<${element}>`;
  const attributes = /[\t\n\f\r ][A-Za-z_:]/.test(tag) ? attributesOf(tag) : {};
  for (const [attribute, value] of Object.entries(attributes)) {
    if (REFUSED_ATTRIBUTE.test(attribute)) return `${attribute}= on <${element}>`;
    if (URL_ATTRIBUTES.has(attribute) && !safeTarget(value, element === 'img' && attribute === 'src' ? 'image' : 'link'))
      return `${attribute}="${value.slice(0, 40)}"`;
    if (attribute === 'style' && UNSAFE_CSS.test(value)) return 'style=';
  }
  // A form control only as a checkbox (task lists): no text to type into, nothing to submit.
  if (
    element === 'input' &&
    (attributes.type?.toLowerCase() !== 'checkbox' || Object.keys(attributes).some((a) => !/^(?:type|class|id|checked|disabled)$/.test(a)))
  )
    return '<input> other than a checkbox';
  return undefined;
}

/**
 * Why some markup in `text` is not safe, or undefined. Every `<` followed by a letter, `/`, `!` or `?` must
 * open something complete and allowed (see the header); other text is text. In Markdown `source`, a letter
 * run ended by anything but white space, `/` or `>` (`<b)c`, `<train.jpg>`) is text to every CommonMark
 * renderer (its tag name grammar) and is skipped; in rendered HTML a browser would read it as a tag.
 */
export function htmlProblem(text: string, source = false): string | undefined {
  for (let i = text.indexOf('<'); i >= 0; i = text.indexOf('<', i + 1)) {
    const next = text[i + 1] ?? '';
    if (!/[A-Za-z/!?]/.test(next)) continue;
    if (source && NOT_A_TAG.test(text.slice(i, i + 64)) && !AUTOLINK_START.test(text.slice(i, i + 34))) continue;
    const at = (re: RegExp) => {
      re.lastIndex = i;
      return re.exec(text);
    };
    let m: RegExpExecArray | null;
    if (next === '!' && text.startsWith('<!--', i)) {
      if (!(m = at(COMMENT))) return 'an unterminated or ambiguous comment';
      if (m[1]?.includes('--!>')) return 'an ambiguous comment';
    } else if (next === '!' || next === '?') {
      if (!(m = at(BOGUS))) return 'an unterminated declaration';
    } else if (next === '/') {
      if (!(m = at(CLOSE_TAG))) return 'an incomplete end tag';
    } else if ((m = at(OPEN_TAG))) {
      const problem = tagProblem(m[1]!, m[0]);
      if (problem) return problem;
    } else if ((m = at(AUTOLINK))) {
      if (!safeTarget(m[1]!, 'link')) return `<${m[1]!.slice(0, 40)}>`;
    } else if (!(m = at(EMAIL_AUTOLINK))) return 'an incomplete or ambiguous tag';
    i += m[0].length - 1;
  }
  return undefined;
}

/** markdown-it as permissive as a renderer may be: raw HTML, links found in text, footnotes, every target. */
const CHECKER = new MarkdownIt({ html: true, linkify: true, maxNesting: 64 }).use(footnote);
CHECKER.validateLink = () => true;

/** A scheme that must not appear anywhere in an island (decoded as a renderer or browser may decode it). */
const UNSAFE_SCHEME_TEXT = /(?<![a-z0-9+.-])(?:javascript|vbscript|livescript|mocha|file|blob|data):/i;

/** Why an island's Markdown is not safe to write, or undefined. */
export function islandProblem(source: string): string | undefined {
  const decoded = commonMarkDecode(numericDecode(source));
  for (const form of [source, decoded, percentDecode(decoded)]) {
    // Tabs, new lines and controls are ignored inside a scheme by browsers; backslashes only escape.
    // eslint-disable-next-line no-control-regex
    const compact = form.replace(/[\u0000-\u001f\u007f\\]/g, '').replace(/data:image\/(?:png|jpeg|gif|webp)[;,]/gi, '');
    const m = UNSAFE_SCHEME_TEXT.exec(compact);
    if (m) return `a ${m[0].toLowerCase()} target`;
  }
  // The Markdown writer's own reference definitions (repeated pictures, docx-images.ts): the first
  // definition of a label wins, so an island defining one would replace the picture.
  if (/\[[ \t\r\n]*folio-/i.test(source)) return 'a reference label of the writer (folio-…)';
  return htmlProblem(source, true) ?? htmlProblem(CHECKER.render(source, {}));
}

// ---- the model ----

type Source = Extract<Block, { t: 'source' }>;

/** Every island of the model, wherever the reader placed it. */
function islandsOf(list: Block[], out: Source[] = []): Source[] {
  for (const b of list) {
    if (b.t === 'source') out.push(b);
    if (b.t === 'source' || b.t === 'quote') islandsOf(b.blocks, out);
    else if (b.t === 'list') for (const it of b.items) islandsOf(it.blocks, out);
    else if (b.t === 'table') for (const r of b.rows) for (const c of r.cells) islandsOf(c.blocks, out);
  }
  return out;
}

/** Models whose islands the caller trusts (DocxExportOptions.trustIslands): written verbatim. */
const TRUSTED = new WeakSet<DocModel>();

/**
 * Writes the islands of this model verbatim, unsafe ones too: for a round trip of Markdown the caller wrote
 * itself (the spec round trip measures that), never for documents from others. Links are still checked.
 */
export function trustIslands(doc: DocModel): void {
  TRUSTED.add(doc);
}

/**
 * The model with what Markdown must not carry taken out: links and images with unsafe targets (their text and
 * alt text kept) and islands whose Markdown is not safe (replaced by their blocks, what Word shows). The
 * model is not changed; unchanged parts are shared.
 */
export function safeMarkdownModel(doc: DocModel, warnings: Set<string>): DocModel {
  // Islands: each alone, then the kept ones together (a reference definition in one is seen by all).
  const islands = TRUSTED.has(doc) ? [] : [...islandsOf(doc.blocks), ...doc.notes.flatMap((n) => islandsOf(n.blocks))];
  const unsafe = new Set(islands.filter((s) => islandProblem(s.markdown) !== undefined));
  const kept = islands.filter((s) => !unsafe.has(s));
  if (kept.length > 1 && islandProblem(kept.map((s) => s.markdown).join('\n\n')) !== undefined) for (const s of kept) unsafe.add(s);
  let links = 0;
  let images = 0;

  const inlines = (list: Inline[]): Inline[] => {
    let out: Inline[] | undefined;
    list.forEach((i, n) => {
      let repl: Inline[] | undefined;
      if (i.t === 'link') {
        const children = inlines(i.children);
        if (!safeTarget(i.href, 'link')) {
          links++;
          repl = children;
        } else if (children !== i.children) repl = [{ ...i, children }];
      } else if (i.t === 'image' && i.data && !/^image\/[a-z0-9.+-]{1,64}$/i.test(i.data.mime)) {
        images++;
        repl = [{ ...i, data: undefined }];
      }
      if (repl && !out) out = list.slice(0, n);
      if (out) out.push(...(repl ?? [i]));
    });
    return out ?? list;
  };
  const blocks = (list: Block[]): Block[] => {
    let out: Block[] | undefined;
    list.forEach((b, n) => {
      const repl = block(b);
      if (repl !== b && !out) out = list.slice(0, n);
      if (out) out.push(...(Array.isArray(repl) ? repl : [repl]));
    });
    return out ?? list;
  };
  const block = (b: Block): Block | Block[] => {
    switch (b.t) {
      case 'para':
      case 'heading':
      case 'code': {
        const l = inlines(b.inlines);
        return l === b.inlines ? b : { ...b, inlines: l };
      }
      case 'quote': {
        const l = blocks(b.blocks);
        return l === b.blocks ? b : { ...b, blocks: l };
      }
      case 'list': {
        const items = b.items.map((it) => {
          const l = blocks(it.blocks);
          return l === it.blocks ? it : { ...it, blocks: l };
        });
        return items.some((it, n) => it !== b.items[n]) ? { ...b, items } : b;
      }
      case 'table': {
        const rows = b.rows.map((r) => {
          const cells = r.cells.map((c) => {
            const l = blocks(c.blocks);
            return l === c.blocks ? c : { ...c, blocks: l };
          });
          return cells.some((c, n) => c !== r.cells[n]) ? { ...r, cells } : r;
        });
        return rows.some((r, n) => r !== b.rows[n]) ? { ...b, rows } : b;
      }
      case 'source': {
        const l = blocks(b.blocks);
        // An unsafe island is replaced by its blocks, in place.
        if (unsafe.has(b)) return l;
        return l === b.blocks ? b : { ...b, blocks: l };
      }
      case 'hr':
        return b;
    }
  };
  const top = blocks(doc.blocks);
  const notes = doc.notes.map((note) => {
    const l = blocks(note.blocks);
    return l === note.blocks ? note : { ...note, blocks: l };
  });
  if (links) warnings.add(`${links} ${UNSAFE_LINK_WARNING}`);
  if (images) warnings.add(`${images} ${UNSAFE_IMAGE_WARNING}`);
  if (unsafe.size) warnings.add(`${unsafe.size} ${UNSAFE_ISLAND_WARNING}`);
  return top === doc.blocks && notes.every((n, i) => n === doc.notes[i]) ? doc : { ...doc, blocks: top, notes };
}
