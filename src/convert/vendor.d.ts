// markdown-it plugins ship without type declarations.
declare module 'markdown-it-footnote' {
  import type MarkdownIt from 'markdown-it';
  const plugin: MarkdownIt.PluginSimple;
  export default plugin;
}
declare module 'markdown-it-task-lists' {
  import type MarkdownIt from 'markdown-it';
  const plugin: MarkdownIt.PluginWithOptions<{ enabled?: boolean; label?: boolean; labelAfter?: boolean }>;
  export default plugin;
}
// css-tree ships without declarations; only what css.ts uses.
declare module 'css-tree' {
  export interface CssNode {
    type: string;
  }
  export interface Rule extends CssNode {
    type: 'Rule';
    prelude: CssNode;
    block: CssNode;
  }
  export function parse(text: string, options?: Record<string, unknown>): CssNode;
  export function walk(ast: CssNode, options: { visit: 'Rule'; enter: (node: Rule) => void }): void;
  export function generate(node: CssNode): string;
}
