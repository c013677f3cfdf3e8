/**
 * Issue 23, from the outside: the two unsafe-Markdown cases of the probe through the real compiled server
 * (test/adversarial/server.ts: a child process), `POST /v1/convert?to=md`:
 * - a forged source-island DOCX (Folio's own island format, its islands part rewritten to hold <script>,
 *   onerror=, javascript: and vbscript: links) answered that Markdown verbatim;
 * - a DOCX whose hyperlink target is `&#106;avascript:alert(1)` was written `[…](<&#106;avascript:alert(1)>)`,
 *   which renderers decode to javascript:.
 * Now each answer, rendered with markdown-it (raw HTML on, every target accepted) and commonmark.js, holds no
 * script, no event handler and no unsafe target; an ordinary DOCX with
 * ordinary links keeps them. Markdown safety itself is tested in depth by test/convert/markdown-safety.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess, serverEnv } from '../adversarial/server.js';
import { HOSTILE_ISLANDS, HOSTILE_TARGETS, forgedIslandDocx, linkDocx, renderedHrefs, renderedProblems } from '../convert/markdown-safety-cases.js';

const DEADLINE_MS = 60_000;

describe.sequential('unsafe Markdown from DOCX → Markdown, against the running server', () => {
  let srv: FolioProcess;
  let key = '';

  beforeAll(async () => {
    srv = await FolioProcess.start(serverEnv({ engineTimeoutMs: 30_000, officeTimeoutMs: 30_000 }));
    key = await srv.newKey();
  }, 180_000);

  afterAll(async () => {
    await srv?.stop();
  }, 60_000);

  async function toMarkdown(name: string, bytes: Uint8Array): Promise<{ markdown: string }> {
    const a = await srv.send({ method: 'POST', path: '/v1/convert?to=md', file: { name, bytes } }, key, DEADLINE_MS);
    expect(a.status, a.error ?? a.body.toString('utf8', 0, 300)).toBe(200);
    expect(a.contentType).toMatch(/^text\/markdown/);
    return { markdown: a.body.toString('utf8') };
  }

  it('the forged island DOCX (script, onerror=, javascript:, vbscript:): what Word shows, nothing active', async () => {
    const { markdown } = await toMarkdown('forged-island.docx', forgedIslandDocx(HOSTILE_ISLANDS));
    expect(renderedProblems(markdown)).toEqual([]);
    expect(markdown).not.toMatch(/<script|onerror|javascript:|vbscript:/i);
    HOSTILE_ISLANDS.forEach((_, n) => expect(markdown).toContain(`Shown **${n}** here.`));
  });

  it('the entity-encoded link DOCX: the link is dropped (its text kept), and every generated variant renders safe', async () => {
    const one = await toMarkdown('entity-link.docx', linkDocx(['&#106;avascript:alert(1)']));
    expect(one.markdown).toBe('link 0\n');
    const all = await toMarkdown('entity-links.docx', linkDocx(HOSTILE_TARGETS));
    expect(renderedProblems(all.markdown)).toEqual([]);
  });

  it('ordinary links still come back as links to the same targets', async () => {
    const targets = ['https://example.com/a?b=1&c=2', 'mailto:someone@example.com', 'relative/page.html'];
    const { markdown } = await toMarkdown('links.docx', linkDocx(targets));
    for (const hrefs of Object.values(renderedHrefs(markdown))) expect(hrefs).toEqual(targets);
    expect(srv.alive()).toBe(true);
  });
});
