/**
 * The playground page at `/`, driven in Debian's Chromium (playwright-core) against the real API (a child
 * process, as in the adversarial suite) with the real telemetry ingest beside it: register a key through the
 * page (the code read from the server's mail outbox), convert Markdown to PDF (a download and a non-blank
 * pdf.js preview), fill a corpus template through the generated form (the DOCX holds the value; the page's
 * `Folio.open` sent the telemetry event), sign (the audit page shown), verify the signed PDF (green, the
 * signer named) and a tampered copy (red), and an invalid key's error with its request id. Screenshots go to
 * .tmp/test-results/playground/ (git-ignored).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess, ROOT, serverEnv } from '../adversarial/server.js';
import { CORPUS_TEMPLATES } from '../helpers/corpus.js';
import { startTestIngest, type SeenRequest, type TestIngest } from '../telemetry/helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const TEMPLATE = path.join(CORPUS_TEMPLATES, 'docx4j--binding-simple.docx');
const SHOTS = path.join(ROOT, '.tmp/test-results/playground');
const WORK = path.join(ROOT, '.tmp/playground-test');
const ASSETS = path.join(ROOT, 'dist/playground/index.html');
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent (scripts/setup.sh installs it in dev mode)`;
if (skip) console.warn(`[playground] skipped: ${skip}`);

let server: FolioProcess;
let ingest: TestIngest;
const seen: SeenRequest[] = [];
let browser: Browser;
let page: Page;
const email = `pg-${Date.now().toString(36)}@example.com`;
let convertedPdf = '';
/** Console errors and uncaught exceptions of the page (a CSP violation would show here). */
const pageErrors: string[] = [];
let signedPdf = '';

function newest(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n = Math.max(n, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return n;
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** The code of the verification mail sent to `to`, from the server's .eml outbox. */
async function codeFor(to: string): Promise<string> {
  const outbox = path.join(server.dataDir, 'outbox');
  for (let i = 0; i < 200; i++) {
    for (const f of fs.existsSync(outbox) ? fs.readdirSync(outbox) : []) {
      const text = fs.readFileSync(path.join(outbox, f), 'utf8').replace(/=\r?\n/g, '');
      const code = text.includes(to) ? /verification code is (\d{6})/.exec(text)?.[1] : undefined;
      if (code) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no verification mail for ${to}`);
}

/** Saves the download that clicking `selector` starts, and returns its path. */
async function download(selector: string, name: string): Promise<string> {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const file = path.join(WORK, name);
  await dl.saveAs(file);
  return file;
}

/** Waits for `selector`; fails at once with the page's error box of `section` when that shows instead. */
async function waitDone(section: string, selector: string, timeout = 150_000): Promise<void> {
  const which = await Promise.race([
    page.waitForSelector(selector, { timeout }).then(() => 'ok'),
    page.waitForSelector(`#${section}-error:not([hidden])`, { timeout }).then(() => 'error'),
  ]);
  if (which === 'error') throw new Error(`the page showed an error: ${await page.textContent(`#${section}-error`)}`);
}

/** How many pixels of the canvases in `container` are not white (or transparent). */
async function inkedPixels(container: string): Promise<number> {
  return page.evaluate((sel) => {
    let n = 0;
    for (const c of document.querySelectorAll<HTMLCanvasElement>(`${sel} canvas`)) {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 0 && (d[i]! < 200 || d[i + 1]! < 200 || d[i + 2]! < 200)) n++;
    }
    return n;
  }, container);
}

describe.skipIf(skip)('the playground page in Chromium', () => {
  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    fs.mkdirSync(WORK, { recursive: true });
    // The page's assets: built by `npm run build`; rebuilt here when the sources are newer.
    if (!fs.existsSync(ASSETS) || fs.statSync(ASSETS).mtimeMs < newest(path.join(ROOT, 'playground'))) {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'playground/vite.config.ts'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
      if (r.status !== 0) throw new Error('building the playground failed');
    }
    ingest = await startTestIngest({}, seen);
    server = await FolioProcess.start({
      ...serverEnv({ engineTimeoutMs: 60_000, officeTimeoutMs: 120_000 }),
      PLAYGROUND_INGEST_URL: `${ingest.url}/v1/collect`,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ acceptDownloads: true, viewport: { width: 1100, height: 900 } });
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      pageErrors.push(m.text());
      console.warn(`[page] ${m.text()}`);
    });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const res = await page.goto(server.url + '/');
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => (document.getElementById('ingest-url') as HTMLInputElement).value !== '');
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await ingest?.close();
  });

  it('an invalid key: the error shows its code, message and request id', async () => {
    await page.fill('#api-key', 'folio_sk_not-a-real-key');
    await page.click('#key-use');
    await page.setInputFiles('#verify-file', { name: 'x.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%%EOF\n') });
    await page.click('#verify-go');
    await page.waitForSelector('#verify-error:not([hidden])');
    expect(await page.textContent('#verify-error .error-code')).toBe('AUTHENTICATION_ERROR');
    expect(await page.textContent('#verify-error')).toContain('HTTP 401');
    const rid = (await page.textContent('#verify-error .error-request-id'))!;
    expect(rid).toMatch(/^fc-/);
    await shot('0-error');
  });

  it('registers a key through the page (the code from the e-mail)', async () => {
    await page.fill('#reg-email', email);
    await page.click('#reg-send');
    await waitDone('reg', '#reg-status:has-text("Check your email")', 30_000);
    await page.fill('#reg-code', await codeFor(email));
    await page.click('#reg-verify');
    await waitDone('reg', '#new-key:not([hidden])', 30_000);
    const key = (await page.textContent('#new-key-value'))!;
    expect(key).toMatch(/^folio_sk_/);
    expect(await page.textContent('#key-status')).toContain('registered');
    await shot('1-key');
  });

  it('converts Markdown to PDF: a download and a non-blank preview', async () => {
    const md = '# Playground report\n\nThis PDF was made from **Markdown** by the Folio playground.\n\n- one\n- two\n- three\n';
    await page.setInputFiles('#convert-file', { name: 'report.md', mimeType: 'text/markdown', buffer: Buffer.from(md) });
    await page.selectOption('#convert-to', 'pdf');
    await page.click('#convert-go');
    await waitDone('convert', '#convert-download');
    await page.waitForFunction(() => /page/.test(document.getElementById('convert-status')!.textContent ?? ''), undefined, { timeout: 60_000 });
    expect(await page.textContent('#convert-download')).toContain('report.pdf');
    expect(await page.locator('#convert-preview canvas').count()).toBeGreaterThan(0);
    expect(await inkedPixels('#convert-preview')).toBeGreaterThan(500);
    convertedPdf = await download('#convert-download', 'report.pdf');
    expect(fs.readFileSync(convertedPdf).subarray(0, 5).toString()).toBe('%PDF-');
    await shot('2-convert');
  }, 240_000);

  it('fills a corpus template through the generated form; the page sent the telemetry event', async () => {
    await page.setInputFiles('#template-file', TEMPLATE);
    await page.click('#template-read');
    await waitDone('template', '#template-form:not([hidden])', 60_000);
    const inputs = page.locator('#template-fields input[type="text"], #template-fields textarea');
    expect(await inputs.count()).toBeGreaterThan(0);
    const value = `Playground value ${Date.now().toString(36)}`;
    await inputs.first().fill(value);
    await page.selectOption('#template-to', 'docx');
    await shot('3-template-form');
    await page.click('#template-fill');
    await waitDone('template', '#template-download', 120_000);
    const docx = await download('#template-download', 'filled.docx');
    const xml = strFromU8(unzipSync(new Uint8Array(fs.readFileSync(docx)))['word/document.xml']!);
    expect(xml).toContain(value);
    await shot('3-template-done');
    // Folio.open on the template sent one document-open event to the configured ingest.
    for (let i = 0; i < 50 && !seen.some((s) => s.method === 'POST' && s.url === '/v1/collect'); i++) await new Promise((r) => setTimeout(r, 100));
    const post = seen.find((s) => s.method === 'POST' && s.url === '/v1/collect');
    expect(post?.status).toBeLessThan(300);
    expect(await page.textContent('#telemetry-note')).toContain('document-open event');
  }, 240_000);

  it('signs the converted PDF and shows the audit page', async () => {
    await page.setInputFiles('#sign-file', convertedPdf);
    await page.fill('#sign-name', 'Ada Lovelace');
    await page.fill('#sign-email', 'ada@example.org');
    await page.click('#sign-go');
    await waitDone('sign', '#sign-download', 120_000);
    await page.waitForFunction(() => /audit page/.test(document.getElementById('sign-status')!.textContent ?? ''), undefined, { timeout: 60_000 });
    const canvas = page.locator('#sign-preview canvas');
    expect(await canvas.count()).toBe(1);
    // The last page is the audit page: the preview shows page n of n, n > the converted PDF's pages.
    const label = (await canvas.getAttribute('aria-label'))!;
    const [, shown, total] = /page (\d+) of (\d+)/.exec(label)!;
    expect(shown).toBe(total);
    expect(await inkedPixels('#sign-preview')).toBeGreaterThan(500);
    signedPdf = await download('#sign-download', 'signed.pdf');
    await shot('4-sign');
  }, 240_000);

  it('verifies the signed PDF: green, with the signer', async () => {
    await page.setInputFiles('#verify-file', signedPdf);
    await page.click('#verify-go');
    await waitDone('verify', '#verify-overall', 60_000);
    expect(await page.getAttribute('#verify-overall', 'data-colour')).toBe('green');
    const report = (await page.textContent('#verify-report'))!;
    expect(await page.textContent('#verify-overall')).toContain('Ada Lovelace');
    expect(report).toContain('ada@example.org');
    expect(report).toMatch(/Coverage/);
    expect(report).toMatch(/Audit trail/);
    expect(await page.getAttribute('.report.signature', 'data-colour')).toBe('green');
    await shot('5-verify-valid');
  }, 120_000);

  it('verifies a tampered copy: red', async () => {
    const bytes = fs.readFileSync(signedPdf);
    // Line 2 of the PDF is a binary comment, inside the signed byte range: changing it keeps the file readable.
    const at = bytes.indexOf('\n%') + 2;
    bytes[at] = bytes[at] === 0xe2 ? 0xe3 : 0xe2;
    const tampered = path.join(WORK, 'tampered.pdf');
    fs.writeFileSync(tampered, bytes);
    await page.setInputFiles('#verify-file', tampered);
    await page.click('#verify-go');
    await waitDone('verify', '#verify-overall', 60_000);
    expect(await page.getAttribute('#verify-overall', 'data-colour')).toBe('red');
    expect(await page.textContent('#verify-overall')).toMatch(/Invalid/);
    await shot('6-verify-tampered');
  }, 120_000);

  it('nothing broke the page: no CSP violation, no uncaught exception (only the 401 of the invalid key)', () => {
    expect(pageErrors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    expect(pageErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});
