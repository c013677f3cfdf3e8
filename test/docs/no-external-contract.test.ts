/**
 * The public contract is in the repository: docs/api.md and the OpenAPI document the API generates from its
 * route schemas (GET /openapi.json). Users never see the project's upstream copy of the contract, so no file
 * cites it (issue 26: 35 files did, as "CONTRACT §n"); what a comment cites instead — a section of
 * docs/api.md, or of the README — must be a section that exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sectionNames, textFiles } from './repository-files.js';

// Spelled in pieces so that this file does not cite what it looks for.
const UPSTREAM = 'CONTRACT';
const EXTERNAL = [new RegExp(`${UPSTREAM}\\.md`), new RegExp(`${UPSTREAM}\\s*§`), new RegExp(`shared/${UPSTREAM}`)];

/** Lines of `text` that cite the upstream contract document, as `file:line: text`. */
export function externalCitations(file: string, text: string): string[] {
  const hits: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (EXTERNAL.some((re) => re.test(line))) hits.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return hits;
}

/**
 * Citations `<doc> § <section>` whose section `<doc>` does not have. The text after each `§` must begin with
 * a section name (`§ Sign` names `## Sign: POST /v1/sign`; `§ Annotate order` still begins with `Annotate`).
 */
export function brokenSectionCitations(file: string, text: string, doc: string, sections: readonly string[]): string[] {
  const broken: string[] = [];
  text.split('\n').forEach((line, i) => {
    const at = line.indexOf(`${doc} §`);
    if (at < 0) return;
    for (const part of line.slice(at).split('§').slice(1)) {
      const cited = part.trimStart();
      if (/^[<…]/.test(cited)) continue; // a placeholder: `docs/api.md § <section>`
      if (!sections.some((s) => cited.startsWith(s))) broken.push(`${file}:${i + 1}: ${doc} § ${cited.slice(0, 40)}`);
    }
  });
  return broken;
}

// This file spells out what it looks for, in its comments and its own cases.
const SELF = 'test/docs/no-external-contract.test.ts';
const files = textFiles().filter((f) => f.file !== SELF);
const apiSections = sectionNames(fs.readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8'));
const readmeSections = sectionNames(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));

describe('the public contract is in the repository', () => {
  it('reads the repository’s files (sources, tests, docs, the client package)', () => {
    const names = new Set(files.map((f) => f.file));
    for (const f of ['docs/api.md', 'README.md', 'src/sign/routes.ts', 'packages/client/src/api-client.ts']) expect(names).toContain(f);
  });

  it('no file cites the upstream contract document', () => {
    expect(files.flatMap((f) => externalCitations(f.file, f.text))).toEqual([]);
  });

  it('every "docs/api.md § …" and "README § …" names a section that exists', () => {
    const broken = files.flatMap((f) => [
      ...brokenSectionCitations(f.file, f.text, 'docs/api.md', apiSections),
      ...brokenSectionCitations(f.file, f.text, 'README', readmeSections),
    ]);
    expect(broken).toEqual([]);
  });

  it('would see a citation of either kind', () => {
    expect(externalCitations('x.ts', `/** POST /v1/sign (${UPSTREAM} §5). */`)).toHaveLength(1);
    expect(externalCitations('x.md', `See ../shared/${UPSTREAM}.md`)).toHaveLength(1);
    expect(externalCitations('x.ts', '// docs/api.md § Sign')).toEqual([]);
    expect(brokenSectionCitations('x.ts', '// docs/api.md § Sign, § Verify', 'docs/api.md', apiSections)).toEqual([]);
    expect(brokenSectionCitations('x.ts', '// docs/api.md § Signing', 'docs/api.md', ['Sign'])).toEqual([]);
    expect(brokenSectionCitations('x.ts', '// docs/api.md § Nowhere', 'docs/api.md', apiSections)).toHaveLength(1);
    expect(brokenSectionCitations('x.md', 'cite `docs/api.md § <section>`', 'docs/api.md', apiSections)).toEqual([]);
  });

  it('docs/api.md names the OpenAPI document and where it comes from', () => {
    const api = fs.readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    expect(api).toContain('GET /openapi.json');
    expect(api).toMatch(/generated from the route schemas/);
  });
});
