/**
 * Hostile and ordinary inputs for Markdown safety (src/convert/markdown-safety.ts), and the judge of what
 * Markdown renders to: shared by test/convert/markdown-safety.test.ts (the library) and
 * test/amplification/markdown-safety.test.ts (the running server).
 *
 * The judge renders Markdown with markdown-it (raw HTML on, every link target accepted: the most permissive
 * renderer) and commonmark.js (raw HTML and every target passed through by default), and reads the HTML as a
 * browser would (htmlparser2 decodes character references in attribute values as HTML5 does).
 */
import * as commonmark from 'commonmark';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { Parser } from 'htmlparser2';
import MarkdownIt from 'markdown-it';
import { markdownToDocx } from '../../src/convert/index.js';

const MARKDOWN_IT = new MarkdownIt({ html: true, linkify: true });
MARKDOWN_IT.validateLink = () => true;
const CM_PARSER = new commonmark.Parser();
const CM_RENDERER = new commonmark.HtmlRenderer();

export const RENDERERS: Record<string, (md: string) => string> = {
  'markdown-it': (md) => MARKDOWN_IT.render(md),
  'commonmark.js': (md) => CM_RENDERER.render(CM_PARSER.parse(md)),
};

/** Elements that run, embed, style, or submit: never in rendered Folio Markdown. */
const ACTIVE = new Set('script style iframe frame frameset object embed applet svg math base link form template noscript textarea xmp'.split(' '));
const URL_ATTRIBUTE = new Set(['href', 'src', 'action', 'formaction', 'data', 'xlink:href', 'background', 'poster', 'cite', 'srcset', 'longdesc']);

/** What a browser makes of a URL's scheme: controls and white space out, lower case (and, stricter, %XX decoded). */
export function schemeOf(url: string): string {
  // eslint-disable-next-line no-control-regex
  const t = url.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
  const decoded = t.replace(/%([0-9a-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return /^([a-z][a-z0-9+.-]*):/.exec(decoded)?.[1] ?? '';
}

export interface RenderedElement {
  name: string;
  attribs: Record<string, string>;
}

export function elementsOf(html: string): RenderedElement[] {
  const out: RenderedElement[] = [];
  new Parser({ onopentag: (name, attribs) => out.push({ name, attribs }) }, { lowerCaseTags: true, lowerCaseAttributeNames: true }).end(html);
  return out;
}

/** What is active in rendered HTML (empty: safe). */
export function activeContent(html: string): string[] {
  const problems: string[] = [];
  if (/<script/i.test(html)) problems.push('<script');
  for (const el of elementsOf(html)) {
    if (ACTIVE.has(el.name)) problems.push(`<${el.name}>`);
    // A <meta> may refresh to a URL or change the referrer policy; microdata's <meta itemprop content> is inert.
    if (el.name === 'meta' && ['http-equiv', 'charset', 'name'].some((a) => a in el.attribs))
      problems.push('<meta> with http-equiv, charset or name');
    for (const [a, v] of Object.entries(el.attribs)) {
      if (a.startsWith('on')) problems.push(`${a}= on <${el.name}>`);
      if (a === 'srcdoc') problems.push('srcdoc=');
      if (URL_ATTRIBUTE.has(a)) {
        const scheme = schemeOf(v);
        const rasterImage = el.name === 'img' && a === 'src' && /^data:image\/(png|jpeg|gif|webp)[;,]/i.test(v.trim());
        if (['javascript', 'vbscript', 'livescript', 'file', 'blob'].includes(scheme) || (scheme === 'data' && !rasterImage))
          problems.push(`${a}="${v.slice(0, 60)}" on <${el.name}>`);
      }
    }
  }
  return problems;
}

/** Active content in the Markdown as each renderer renders it, by renderer. */
export function renderedProblems(md: string): string[] {
  return Object.entries(RENDERERS).flatMap(([name, render]) => activeContent(render(md)).map((p) => `${name}: ${p}`));
}

/** The href of every rendered link, by renderer. */
export function renderedHrefs(md: string): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(RENDERERS).map(([name, render]) => [
      name,
      elementsOf(render(md))
        .filter((e) => e.name === 'a' && e.attribs.href !== undefined)
        .map((e) => e.attribs.href!),
    ]),
  );
}

// ───────────── DOCX inputs ─────────────

const xmlAttr = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A DOCX with one paragraph per target, each a hyperlink "link <n>" whose relationship target is that string
 * (as a hostile package writes it: the relationship part is edited after Folio wrote ordinary links).
 */
export function linkDocx(targets: string[], opts: { table?: boolean } = {}): Uint8Array {
  const md = opts.table
    ? '| a | b |\n|---|---|\n' + targets.map((_, n) => `| [link ${n}](https://example.com/${n}) | x |`).join('\n') + '\n'
    : targets.map((_, n) => `[link ${n}](https://example.com/${n})`).join('\n\n') + '\n';
  const files = unzipSync(markdownToDocx(md));
  let rels = strFromU8(files['word/_rels/document.xml.rels']!);
  targets.forEach((t, n) => {
    const before = `Target="https://example.com/${n}"`;
    if (!rels.includes(before)) throw new Error(`no relationship for link ${n}`);
    rels = rels.replace(before, `Target="${xmlAttr(t)}"`);
  });
  files['word/_rels/document.xml.rels'] = strToU8(rels);
  return zipSync(files);
}

/**
 * A forged source-island DOCX: Folio's own DOCX of `Some <b>bold</b> HTML.` (one island per paragraph) with
 * the islands part (customXml/item1.xml, `<island id="n">`) rewritten to hold `sources`. The content
 * controls' fingerprints are of the text Word shows, which is unchanged, so the reader honours the islands.
 */
export const ISLAND_SHOWN = (n: number) => `Shown ${n} here.`;
export function forgedIslandDocx(sources: string[]): Uint8Array {
  const md = sources.map((_, n) => `Shown <b>${n}</b> here.`).join('\n\n') + '\n';
  const files = unzipSync(markdownToDocx(md));
  let part = strFromU8(files['customXml/item1.xml']!);
  sources.forEach((s, n) => {
    const re = new RegExp(`<island id="${n + 1}">[^<]*</island>`);
    if (!re.test(part)) throw new Error(`no island ${n + 1}`);
    part = part.replace(re, `<island id="${n + 1}">${xmlText(s)}</island>`);
  });
  files['customXml/item1.xml'] = strToU8(part);
  return zipSync(files);
}

// ───────────── hostile and ordinary targets ─────────────

/** Targets that are javascript:, vbscript: or data:text/html once a renderer or browser decodes them. */
export const HOSTILE_TARGETS: string[] = (() => {
  const cores = ['javascript:alert(1)', 'vbscript:msgbox(1)', 'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='];
  const out = new Set<string>();
  for (const c of cores) {
    const [first, ...rest] = c;
    const tail = rest.join('');
    const colon = c.indexOf(':');
    out.add(c);
    out.add(c.toUpperCase());
    out.add(c.replace(/^(\w)(\w)/, (_, a: string, b: string) => a.toUpperCase() + b)); // mixed case
    out.add(`&#${first!.charCodeAt(0)};${tail}`); // &#106;avascript:
    out.add(`&#${first!.charCodeAt(0)}${tail}`); // no semicolon
    out.add(`&#x${first!.charCodeAt(0).toString(16).toUpperCase()};${tail}`); // &#x6A;
    out.add(`&#0000${first!.charCodeAt(0)};${tail}`);
    out.add(`${c.slice(0, colon)}&colon;${c.slice(colon + 1)}`);
    out.add(`${c.slice(0, colon)}&#58;${c.slice(colon + 1)}`);
    out.add(`${c.slice(0, 4)}&Tab;${c.slice(4)}`);
    out.add(`${c.slice(0, 4)}&NewLine;${c.slice(4)}`);
    out.add(`${c.slice(0, 4)}\t${c.slice(4)}`);
    out.add(`${c.slice(0, 4)}\n${c.slice(4)}`);
    out.add(`${c.slice(0, 4)}&#x09;${c.slice(4)}`);
    out.add(` ${c}`);
    out.add(`&amp;#${first!.charCodeAt(0)};${tail}`); // double encoded
    out.add(`${c.slice(0, colon)}%3A${c.slice(colon + 1)}`);
    out.add(`%${first!.charCodeAt(0).toString(16)}${tail}`);
    out.add(`\\${c}`); // a backslash (an escape to a renderer only before punctuation)
    out.add(`${c.slice(0, 2)}\\${c.slice(2)}`);
    out.add(`<${c}>`); // brackets of a Markdown destination
    out.add(`${c})`);
    out.add(`(${c})`);
    out.add(`](${c}`);
  }
  // Nested brackets and a second destination: the first must not end early.
  out.add('x)](javascript:alert(1)');
  out.add('x>](javascript:alert(1)');
  return [...out];
})();

/**
 * `javascript:alert(1)` with each character written at random as itself, in upper case, as a decimal or hex
 * character reference (with or without `;`), or as a named one where HTML has one (`&colon;`, `&lpar;`), with
 * tabs, new lines and controls spliced into the scheme: `count` of them, from `seed`.
 */
export function encodedVariants(count: number, seed: number): string[] {
  let a = seed >>> 0;
  const r = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const named: Record<string, string> = { ':': '&colon;', '(': '&lpar;', ')': '&rpar;' };
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let s = '';
    for (const [k, c] of [...'javascript:alert(1)'].entries()) {
      const x = r();
      const code = c.charCodeAt(0);
      if (x < 0.2) s += c.toUpperCase();
      else if (x < 0.4) s += `&#${code}${r() < 0.5 ? ';' : ''}`;
      else if (x < 0.6) s += `&#x${code.toString(16)}${r() < 0.5 ? ';' : ''}`;
      else if (x < 0.7 && named[c]) s += named[c];
      else s += c;
      // Only inside the scheme (a browser strips these there).
      if (k < 10 && r() < 0.15) s += ['\t', '\n', '&Tab;', '&NewLine;', '&#x0d;'][Math.floor(r() * 5)];
    }
    out.push(s);
  }
  return out;
}

/** Ordinary targets: written so every renderer reads back the same target. */
export const ORDINARY_TARGETS = [
  'https://example.com/',
  'https://example.com/a_b*c~d?x=1&y=2#frag',
  'https://example.com/search?q=a&amp;b',
  'https://example.com/&#106;x',
  'https://example.com/(paren)',
  'https://example.com/un(balanced',
  'https://example.com/a b',
  'https://example.com/a<b>c',
  'https://example.com/back\\slash',
  'https://example.com/"quote"',
  'https://example.com/pipe|here',
  'https://example.com/%20encoded',
  'https://example.com/パス/é',
  'mailto:someone@example.com',
  'tel:+15551234567',
  'relative/path.html',
  '../up/one.md',
  '/root?x=[1]',
  '#section',
  'https://example.com/)[evil](javascript:alert(1)',
  'https://example.com/"onmouseover="alert(1)',
  'https://example.com/<script>alert(1)</script>',
];

/** Island Markdown whose rendering would be active content: written as what Word shows instead. */
export const HOSTILE_ISLANDS = [
  '<script>alert(1)</script>',
  'text <script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<img src="x" ONERROR="alert(1)">',
  '<img/src=x/onerror=alert(1)>',
  '<a href=javascript:alert(1)>x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href="&#106avascript:alert(1)">x</a>',
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '<a href="java\tscript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<style>body{display:none}</style>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<details open ontoggle=alert(1)>x</details>',
  '<x-card onmouseover=alert(1)>hover</x-card>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src=javascript:alert(1)>',
  '<form action=javascript:alert(1)><button>x</button></form>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<img src="data:text/html,<script>alert(1)</script>">',
  '<!--><img src=x onerror=alert(1)>-->',
  '<![CDATA[><img src=x onerror=alert(1)>]]>',
  '<div>\n<img src=x\n\n<!-- onerror=alert(1) -->',
  '<div id="x"\nonmouseover=alert(1)',
  '[x](javascript:alert(1))',
  '[x](<&#106;avascript:alert(1)>)',
  '[x](JaVa&Tab;ScRiPt&colon;alert(1))',
  '![x](javascript:alert(1))',
  '<javascript:alert(1)>',
  '[x]\n\n[x]: javascript:alert(1)',
  '[x]: &#106;avascript:alert(1)\n\n[x]',
];

/** Island Markdown that is safe to render: kept verbatim. */
export const ORDINARY_ISLANDS = [
  'Some <b>bold</b> and <sup>1</sup> HTML.',
  '<div align="center">centred</div>',
  '<details><summary>More</summary>\n\nHidden *text*.\n\n</details>',
  '<a href="https://example.com/a?b=1&amp;c=2" title="t">a link</a>',
  '<img src="https://example.com/a.png" alt="a picture" width="20">',
  'A comment <!-- kept --> inside.',
  '<span style="color:red">red</span> <kbd>Ctrl</kbd>',
  '<table>\n<tr><td>cell</td></tr>\n</table>',
  '![logo](https://example.com/logo.png "Logo")',
  '[a](https://example.com/) and <https://example.com/auto>',
  '<span itemscope itemtype="https://schema.org/City"><meta itemprop="name" content="Paris">Paris</span>',
  '<x-note data-kind="aside">custom</x-note>',
];
