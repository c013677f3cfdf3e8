/**
 * `folio` in local mode, end to end: the compiled CLI spawned on corpus files, engines in its own process
 * (LibreOffice pool booted once per run). Output is piped, so batches print plain lines (no TTY).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchFolder, cliEntry, CORPUS, isPdf, runCli, tamper, tempDir, WORD_PDF } from './helpers.js';

const COMMANDS = [
  'convert',
  'annotate',
  'fields',
  'sign',
  'verify',
  'merge',
  'keys',
  'keys register',
  'keys verify',
  'keys list',
  'keys revoke',
  'serve',
  'usage',
];

let dir: string;
beforeAll(() => {
  dir = tempDir('local');
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('folio --help', () => {
  it('answers on every command, with examples, exit 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    for (const c of ['convert', 'annotate', 'fields', 'sign', 'verify', 'merge', 'keys', 'serve', 'usage']) expect(top.stdout).toContain(c);
    const results = await Promise.all(COMMANDS.map((c) => runCli([...c.split(' '), '--help'])));
    results.forEach((r, i) => {
      expect(r.code, COMMANDS[i]).toBe(0);
      expect(r.stdout, COMMANDS[i]).toContain('Examples:');
      expect(r.stdout, COMMANDS[i]).toContain(`folio `);
    });
  });

  it('refuses bad usage with exit code 2 and a one-line reason', async () => {
    const r = await runCli(['convert', path.join(dir, 'does-not-exist.docx')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^folio: FILE_NOT_FOUND: .*does-not-exist\.docx/m);
    const bad = await runCli(['convert', '--to', 'odt', 'x.docx']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'odt' is invalid");
  });
});

describe('folio convert (local)', () => {
  it('converts a folder with one broken file: the others convert, plain lines, the summary names it, exit 1', async () => {
    const input = path.join(dir, 'batch');
    const out = path.join(dir, 'batch-out');
    const { valid, broken } = batchFolder(input);
    const r = await runCli(['convert', input, '--out', out, '--jobs', '2'], { timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(1);
    for (const stem of valid) expect(isPdf(path.join(out, `${stem}.pdf`)), stem).toBe(true);
    expect(fs.existsSync(path.join(out, broken.replace(/\.docx$/, '.pdf')))).toBe(false);
    // Not a TTY: one plain line per document with its counter, no progress-bar escapes.
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => /^\[\d\/4\] ok {4}\S/.test(l))).toHaveLength(3);
    expect(lines.filter((l) => /^\[\d\/4\] FAIL {2}.*poi--truncated62886\.docx: INVALID_FILE_FORMAT: /.test(l))).toHaveLength(1);
    expect(r.stdout + r.stderr).not.toContain('\u001b[');
    expect(r.stderr).toMatch(/converted 3 of 4 documents in .* docs\/s\); 1 failed:\n {2}\S*poi--truncated62886\.docx: INVALID_FILE_FORMAT/);
  }, 180_000);

  it('converts Markdown matched by a glob to DOCX through the engine pool, mirroring folders under --out', async () => {
    const src = path.join(dir, 'md');
    fs.mkdirSync(path.join(src, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(src, 'a.md'), '# Alpha\n\nText with **bold** and a [link](https://example.com).\n');
    fs.writeFileSync(path.join(src, 'sub', 'b.md'), '- [x] done\n- [ ] open\n\n> quoted\n');
    fs.writeFileSync(path.join(src, 'ignored.txt'), 'not matched by the glob');
    const out = path.join(dir, 'md-out');
    const r = await runCli(['convert', `${src}/**/*.md`, '--to', 'docx', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const a = unzipSync(new Uint8Array(fs.readFileSync(path.join(out, 'a.docx'))));
    expect(strFromU8(a['word/document.xml']!)).toContain('Alpha');
    const b = unzipSync(new Uint8Array(fs.readFileSync(path.join(out, 'sub', 'b.docx'))));
    expect(strFromU8(b['word/document.xml']!)).toContain('quoted');
    expect(r.stderr).toMatch(/converted 2 of 2 documents/);
  });
});

describe('folio convert on a terminal', () => {
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)(
    'draws a progress bar with counts, throughput and ETA instead of plain lines',
    async () => {
      const src = path.join(dir, 'tty');
      fs.mkdirSync(src, { recursive: true });
      for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(src, `n${i}.md`), `# Note ${i}\n\ntext\n`);
      fs.writeFileSync(path.join(src, 'bad.html'), Buffer.from([0x3c, 0x68, 0x31, 0x3e, 0, 0, 0]));
      const command = [process.execPath, ...cliEntry(), 'convert', src, '--to', 'docx', '--out', path.join(dir, 'tty-out')]
        .map((a) => `'${a}'`)
        .join(' ');
      // util-linux script(1) gives the CLI a pseudo-terminal; its exit status is the CLI's.
      const r = spawnSync('script', ['-qec', command, '/dev/null'], {
        encoding: 'utf8',
        env: { ...process.env, CI: undefined, COLUMNS: '160' },
        timeout: 120_000,
      });
      const screen = r.stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g'), '');
      expect(r.status).toBe(1);
      expect(screen).toMatch(/[█░]+ 1\/4 \| [\d.]+ docs\/s \| ETA [^|]+ \| [01] fail/);
      expect(screen).toMatch(/█+ 4\/4 \| [\d.]+ docs\/s \| ETA done \| 1 fail/);
      expect(screen).not.toMatch(/\[\d\/4\] ok/);
      expect(screen).toMatch(/FAIL {2}\S*bad\.html: /);
      expect(screen).toMatch(/converted 3 of 4 documents .*; 1 failed:/);
    },
    130_000,
  );
});

describe('folio fields / annotate (local)', () => {
  const template = path.join(CORPUS, 'templates', 'docxtpl--order_tpl.docx');

  it("lists a template's fields as a table and as JSON", async () => {
    const t = await runCli(['fields', template]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/^id\s+type\s+kind\s+location/);
    expect(t.stdout).toMatch(/customer_name\s+text\s+placeholder\s+body/);
    const j = await runCli(['fields', template, '--json']);
    const ids = (JSON.parse(j.stdout) as { fields: Array<{ id: string }> }).fields.map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining(['customer_name', 'company_name', 'total_price']));
  });

  it('fills a template from a YAML data file', async () => {
    const data = path.join(dir, 'data.yaml');
    fs.writeFileSync(data, 'customer_name: Ada Lovelace\ncompany_name: Analytical Engines Ltd\ntotal_price: 42\nnot_in_template: x\n');
    const out = path.join(dir, 'order.docx');
    const r = await runCli(['annotate', template, data, '-o', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = (JSON.parse(r.stdout) as { report: { filled: Array<{ id: string }>; unmatched: string[] } }).report;
    expect(report.filled.map((f) => f.id)).toEqual(expect.arrayContaining(['customer_name', 'company_name', 'total_price']));
    expect(report.unmatched).toEqual(['not_in_template']);
    const xml = strFromU8(unzipSync(new Uint8Array(fs.readFileSync(out)))['word/document.xml']!);
    expect(xml).toContain('Ada Lovelace');
    expect(xml).not.toContain('customer_name');
  });
});

describe('folio sign / verify (local)', () => {
  it("refuses what POST /v1/sign refuses, with the API's words, before any work (exit 2, nothing written)", async () => {
    const env = { DATA_DIR: path.join(dir, 'data') };
    const pdf = path.join(dir, 'check-input.pdf');
    fs.writeFileSync(pdf, '%PDF-1.4\n');
    const out = path.join(dir, 'check-output.pdf');
    // An angle bracket the CLI's own e-mail check once let through; the API's pattern refuses it.
    const email = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada<x@example.com', '-o', out], { env });
    expect(email.code, email.stderr).toBe(2);
    expect(email.stderr).toContain('signer.email must be an e-mail address');
    // A date the CLI once signed as 2 March; the API's calendar check refuses it.
    const events = path.join(dir, 'feb30.json');
    fs.writeFileSync(events, JSON.stringify([{ type: 'document.signed', timestamp: '2026-02-30T10:00:00Z' }]));
    const date = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--events', events, '-o', out], { env });
    expect(date.code, date.stderr).toBe(2);
    expect(date.stderr).toContain('auditTrail.0.timestamp must be an ISO 8601 date-time');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('signs a PDF; verify exits 0 on it and 1 on a tampered copy', async () => {
    const env = { DATA_DIR: path.join(dir, 'data') };
    const pdf = path.join(dir, 'to-sign.pdf');
    fs.copyFileSync(
      path.join(
        WORD_PDF,
        fs.readdirSync(WORD_PDF).find((f) => f.endsWith('.pdf'))!,
      ),
      pdf,
    );
    const events = path.join(dir, 'events.json');
    fs.writeFileSync(
      events,
      JSON.stringify([
        { type: 'document.viewed', timestamp: '2026-01-31T10:00:00Z' },
        { type: 'document.signed', timestamp: '2026-01-31T10:02:00Z', data: { method: 'typed' } },
      ]),
    );
    const signed = path.join(dir, 'signed.pdf');
    const s = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--events', events, '-o', signed], { env });
    expect(s.code, s.stderr).toBe(0);
    expect(isPdf(signed)).toBe(true);

    const ok = await runCli(['verify', signed], { env });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/VALID — TOTAL_PASSED \(1 signature\)/);
    expect(ok.stdout).toMatch(/ENTIRE_FILE\s+yes\s+yes\s+yes\s+yes \(this service\)\s+NONE\s+TOTAL_PASSED/);
    expect(ok.stdout).toContain('signed by Ada Lovelace <ada@example.com>');
    expect(ok.stdout).toContain('2 event(s)');

    const tampered = path.join(dir, 'tampered.pdf');
    tamper(signed, tampered);
    const bad = await runCli(['verify', tampered], { env });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/NOT VALID — TOTAL_FAILED/);

    const json = await runCli(['verify', signed, tampered, '--json'], { env });
    expect(json.code).toBe(1);
    const answers = JSON.parse(json.stdout) as Array<{ file: string; valid: boolean }>;
    expect(answers.map((a) => a.valid)).toEqual([true, false]);

    // A PDF without signatures is not "valid" either.
    const none = await runCli(['verify', pdf], { env });
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('NO_SIGNATURE_FOUND');
  }, 120_000);
});
