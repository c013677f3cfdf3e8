/**
 * What the two pandoc conformance scripts share: their command-line option reader and the pandoc Markdown
 * reader (with the GFM extensions an example needs) to run each spec example through.
 */
import { extensionsOf, type Example } from '../test/convert/conformance.js';

/** The value after `--name` on the command line, if any. */
export function cliOption(name: string, args: readonly string[] = process.argv.slice(2)): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** cmark-gfm's extension names → pandoc's. */
const PANDOC_EXT: Record<string, string> = {
  autolink: 'autolink_bare_uris',
  table: 'pipe_tables',
  strikethrough: 'strikeout',
  tasklist: 'task_lists',
  footnotes: 'footnotes',
};

/** pandoc's `-f` for an example: `commonmarkReader` for the CommonMark spec, else gfm with exactly its extensions. */
export function pandocReaderFor(example: Example, commonmarkReader = 'commonmark'): string {
  if (example.file === 'commonmark-spec') return commonmarkReader;
  const on = new Set(
    extensionsOf(example)
      .map((e) => PANDOC_EXT[e])
      .filter(Boolean),
  );
  let f = 'gfm-emoji-yaml_metadata_block';
  for (const ext of Object.values(PANDOC_EXT)) f += on.has(ext) ? `+${ext}` : `-${ext}`;
  return f;
}
