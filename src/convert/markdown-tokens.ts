/**
 * Faster token construction for markdown-it. Its build turns Token's class fields into `_defineProperty`
 * calls (thirteen per token, each through toPropertyKey), which was a tenth of the parse of a large document.
 * Block and inline states push tokens made by a plain constructor instead: the same fields in the same order,
 * the same prototype (so `instanceof`, attrGet and the rest are Token's), created by the same two methods,
 * copied from markdown-it 15 with only the constructor changed. The three states' `Token` (what plugins and
 * core rules call as `new state.Token()`: the footnote plugin, linkify) is that constructor too.
 *
 * The inline state gets the same treatment: markdown-it makes one per inline token (paragraph, heading, table
 * cell), and its twelve class fields cost another 4 % of the 1 MB benchmark's parse. FastInlineState sets the
 * same fields in the same order on StateInline's prototype.
 */
import type MarkdownIt from 'markdown-it';

type MarkdownItInstance = InstanceType<typeof MarkdownIt>;
type AnyToken = Record<string, unknown>;
interface BlockState {
  level: number;
  tokens: AnyToken[];
}
interface InlineState extends BlockState {
  pending: string;
  pendingLevel: number;
  tokens_meta: unknown[];
  delimiters: unknown[];
  _prev_delimiters: unknown[][];
  pushPending(): AnyToken;
}

// The prototypes are shared by every markdown-it instance (patched once); the parsers' State fields are each
// instance's own.
const patched = new WeakSet<object>();
const patchedParsers = new WeakSet<object>();

export function fastTokens(md: MarkdownItInstance): void {
  const probe = new md.core.State('', md, {}) as unknown as { Token: { prototype: object } };
  const tokenProto = probe.Token.prototype;
  const blockProto = md.block.State.prototype as unknown as Record<string, unknown>;
  const inlineProto = md.inline.State.prototype as unknown as Record<string, unknown>;
  function FastToken(this: AnyToken, type: string, tag: string, nesting: number) {
    this.map = null;
    this.level = 0;
    this.children = null;
    this.content = '';
    this.markup = '';
    this.info = '';
    this.block = false;
    this.hidden = false;
    this.type = type;
    this.tag = tag;
    this.attrs = null;
    this.nesting = nesting;
    this.meta = null;
  }
  FastToken.prototype = tokenProto;
  const make = FastToken as unknown as new (type: string, tag: string, nesting: number) => AnyToken;

  if (!patchedParsers.has(md.inline)) {
    patchedParsers.add(md.inline);
    fastStates(md, make);
  }
  if (patched.has(blockProto)) return;
  patched.add(blockProto);

  blockProto.push = function push(this: BlockState, type: string, tag: string, nesting: number) {
    const token = new make(type, tag, nesting);
    token.block = true;
    if (nesting < 0) this.level--;
    token.level = this.level;
    if (nesting > 0) this.level++;
    this.tokens.push(token);
    return token;
  };
  inlineProto.pushPending = function pushPending(this: InlineState) {
    const token = new make('text', '', 0);
    token.content = this.pending;
    token.level = this.pendingLevel;
    this.tokens.push(token);
    this.pending = '';
    return token;
  };
  inlineProto.push = function push(this: InlineState, type: string, tag: string, nesting: number) {
    if (this.pending) this.pushPending();
    const token = new make(type, tag, nesting);
    let tokenMeta: { delimiters: unknown[] } | undefined;
    if (nesting < 0) {
      this.level--;
      this.delimiters = this._prev_delimiters.pop()!;
    }
    token.level = this.level;
    if (nesting > 0) {
      this.level++;
      this._prev_delimiters.push(this.delimiters);
      this.delimiters = [];
      tokenMeta = { delimiters: this.delimiters };
    }
    this.pendingLevel = this.level;
    this.tokens.push(token);
    this.tokens_meta.push(tokenMeta);
    return token;
  };
}

/** The parsers' states: see the file comment. */
function fastStates(md: MarkdownItInstance, make: new (type: string, tag: string, nesting: number) => AnyToken): void {
  // The inline parser constructs `new this.State(...)`: a plain function with StateInline's prototype.
  const inline = md.inline as unknown as { State: { prototype: object } };
  function FastInlineState(this: AnyToken, src: string, mdi: unknown, env: unknown, outTokens: unknown[]) {
    this.pos = 0;
    this.level = 0;
    this.pending = '';
    this.pendingLevel = 0;
    this.cache = {};
    this.backticks = {};
    this.backticksScanned = false;
    this.skipHtmlSpecial = false;
    this.linkLevel = 0;
    this.delimiters = [];
    this._prev_delimiters = [];
    this.Token = make;
    this.src = src;
    this.env = env;
    this.md = mdi;
    this.tokens = outTokens;
    this.tokens_meta = Array(outTokens.length);
    this.posMax = src.length;
  }
  FastInlineState.prototype = inline.State.prototype;
  inline.State = FastInlineState as unknown as { prototype: object };
  // Core and block states are made once per document: keep their constructors, give them the fast Token.
  for (const parser of [md.core, md.block] as unknown as Array<{ State: new (...args: unknown[]) => AnyToken }>) {
    const State = parser.State;
    const WithFastToken = function (...args: unknown[]) {
      const state = new State(...args);
      state.Token = make;
      return state;
    } as unknown as { prototype: object };
    WithFastToken.prototype = State.prototype;
    parser.State = WithFastToken as unknown as new (...args: unknown[]) => AnyToken;
  }
}
