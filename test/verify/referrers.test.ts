/**
 * The referrer index built by a raw-byte scan (src/verify/referrers.ts) must answer exactly what a full parse
 * of every object answers: checked object by object on the attack corpus and on hand-written bodies that try
 * to throw the scan off (keywords and references inside strings and comments, `5.0 0 R`, hex strings, a
 * reference after a nested dictionary, an object stream, a broken xref offset).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRefs, openPdf, type PdfDocument } from '../../src/pdf/index.js';
import { lazyReferrerIndex } from '../../src/verify/referrers.js';
import { appendUpdate, CORPUS, makePdf } from './fixtures.js';

function fullIndex(doc: PdfDocument): Map<number, Set<number>> {
  const index = new Map<number, Set<number>>();
  const nums = new Set<number>();
  for (const r of doc.revisions) for (const n of r.entries.keys()) nums.add(n);
  for (const n of nums) {
    collectRefs(doc.resolve(n, doc.last)?.value, (ref) => {
      let s = index.get(ref);
      if (!s) index.set(ref, (s = new Set()));
      s.add(n);
    });
  }
  return index;
}

function expectSameIndex(bytes: Uint8Array) {
  const nums = new Set<number>();
  const lazyDoc = openPdf(bytes);
  for (const r of lazyDoc.revisions) for (const n of r.entries.keys()) nums.add(n);
  const lazy = lazyReferrerIndex(lazyDoc, nums, 300_000);
  const full = fullIndex(openPdf(bytes));
  const queried = new Set([...nums, ...full.keys()]);
  const byNumber = (a: number, b: number) => a - b;
  for (const n of queried) expect([...(lazy.get(n) ?? [])].sort(byNumber), `referrers of ${n}`).toEqual([...(full.get(n) ?? [])].sort(byNumber));
  return full;
}

describe('referrer index by raw scan', () => {
  it('equals the full index on every file of the attack corpus', () => {
    const files = (fs.readdirSync(CORPUS, { recursive: true }) as string[]).filter((f) => f.endsWith('.pdf'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) expectSameIndex(new Uint8Array(fs.readFileSync(path.join(CORPUS, f))));
  });

  it('equals the full index on bodies written to mislead a byte scan', async () => {
    const base = await makePdf(2);
    const n = 900;
    const tricky = appendUpdate(base, [
      // "endobj" and "stream" inside a literal string (with an escaped parenthesis), then a reference.
      { num: n, body: '<</A (endobj \\) stream ( nested ) 7 0 R) /B 1 0 R>>' },
      // A comment holding a keyword, a comment between the tokens of a reference, a real-valued object number.
      { num: n + 1, body: '<</A 2 % endobj stream\n 0 % x\n R /B 5.0 0 R /C [<00ff> <</D 3 0 R>>] /E /stream>>' },
      // A stream whose data looks like references: only the dictionary counts.
      { num: n + 2, body: '<</Length 12 /F 4 0 R>>\nstream\n6 0 R 8 0 R\nendstream' },
      // A name that ends in digits before `0 R`, and a signed number.
      { num: n + 3, body: '[/F9 0 R +1 0 R 2 0 R]' },
      // Names are skipped whole (digits and `#` escapes included), up to the next delimiter or white space.
      { num: n + 4, body: '<</F9/G /X 8 0 R /H#20 9 0 R/J(x)/K 3 0 R /L-1 5 0 R>>' },
    ]);
    const full = expectSameIndex(tricky);
    expect(full.get(1)).toContain(n);
    expect(full.get(2)).toContain(n + 1);
    expect(full.get(4)).toContain(n + 2);
    expect(full.get(6)?.has(n + 2) ?? false).toBe(false);
    expect(full.get(8)).toContain(n + 4);
    expect(full.get(5)).toContain(n + 4);
  });
});
