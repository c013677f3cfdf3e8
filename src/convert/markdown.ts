/**
 * Markdown → HTML with markdown-it (CommonMark-compliant) plus the GFM extensions: tables, strikethrough
 * (built in), autolinks (linkify), task lists and footnotes (plugins). Raw HTML is passed through, so it goes
 * through the same HTML → DOCX engine as an HTML upload.
 */
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import taskLists from 'markdown-it-task-lists';

let renderer: ReturnType<typeof createRenderer> | undefined;

function markdownRenderer() {
  return (renderer ??= createRenderer());
}

function createRenderer() {
  // maxNesting bounds block/inline recursion: 100,000-deep quotes or lists are flattened, never overflow.
  const md = new MarkdownIt('default', { html: true, linkify: true, typographer: false, maxNesting: 64 });
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: true });
  md.use(footnote);
  md.use(taskLists, { enabled: false });
  return md;
}

export function markdownToHtml(markdown: string): string {
  if (markdown.charCodeAt(0) === 0xfeff) markdown = markdown.slice(1);
  return markdownRenderer().render(markdown);
}
