/** Shared by the benchmarks: a bench server run as a child process that reports itself as one JSON line on stderr. */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';

export const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Starts `node --import tsx <script> [...args]` (script relative to the repository root) and resolves with the
 * first stderr line that starts with `{`, parsed; rejects if the child exits before printing one.
 */
export async function startBenchServer<T>(
  script: string,
  args: string[] = [],
): Promise<{ child: ChildProcessByStdio<null, null, Readable>; info: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const info = await new Promise<T>((resolve, reject) => {
    let buf = '';
    child.stderr.on('data', (d) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as T);
    });
    child.on('exit', (c) => reject(new Error(`bench server exited ${c}: ${buf}`)));
  });
  return { child, info };
}

/**
 * A report-like Markdown document of about `bytes` bytes: every block kind a business report uses (the md→docx
 * input of bench/substrates.ts and bench/markdown-cpu.ts).
 */
export function reportMarkdown(bytes: number): string {
  const parts = ['# Quarterly operations report\n\nPrepared by the *operations* team. Figures are **provisional** until audit.\n\n'];
  let size = parts[0]!.length;
  for (let i = 1; size < bytes; i++) {
    const block =
      `## ${i}. Region ${i} review\n\n` +
      `Revenue in region ${i} grew by **${(i * 1.7).toFixed(1)}%** over the quarter, driven by the *renewal* programme ` +
      `and the [new partner portal](https://example.com/portal/${i}). The \`ingest-${i}\` pipeline processed ` +
      `${1000 + i * 37} batches; see the appendix for the method.[^r${i}]\n\n` +
      `### ${i}.1 Highlights\n\n` +
      `- Customer retention held at _${90 + (i % 9)}%_\n  - enterprise accounts: **stable**\n  - small business: up by ${i % 5} points\n` +
      `- Support backlog reduced\n  1. first-line tickets closed within a day\n  2. escalations reviewed weekly\n- Two audits completed\n\n` +
      `| Metric | Q${(i % 4) + 1} | Previous | Change |\n|:--|--:|--:|:-:|\n` +
      `| Revenue (k€) | ${1200 + i * 13} | ${1150 + i * 11} | ▲ |\n| Active users | ${5000 + i * 90} | ${4800 + i * 85} | ▲ |\n` +
      `| Incidents | ${i % 7} | ${(i + 3) % 7} | ▼ |\n\n` +
      `> "The quarter confirmed the plan; the risks are in *delivery*, not demand." — regional lead ${i}\n\n` +
      '```ts\n' +
      `const region${i} = await report.load({ id: ${i}, quarter: 'Q${(i % 4) + 1}' });\n` +
      `console.log(region${i}.summary());\n` +
      '```\n\n' +
      `[^r${i}]: Source: finance extract ${i}, reconciled against the ledger.\n\n`;
    parts.push(block);
    size += block.length;
  }
  return parts.join('');
}

/** A contract-like PDF of `pages` A4 pages of text, the input of the signing benchmarks. */
export async function contractPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595.28, 841.89]);
    for (let line = 0; line < 40; line++) {
      page.drawText(`Page ${i + 1}, clause ${line + 1}: the parties agree to the terms set out in this agreement.`, {
        x: 40,
        y: 800 - line * 18,
        size: 10,
        font,
      });
    }
  }
  return doc.save();
}
