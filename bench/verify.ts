/**
 * POST /v1/verify's engine against poppler's `pdfsig -nocert` (process start included, as a caller would run
 * it), in one run on the same files: a 1-signature 1-page PDF, a 3-signature 100-page PDF, and files/s over
 * the 24 files of the attack corpus. Folio does the full revision diff and DocMDP analysis pdfsig does not.
 * Each row gives wall-clock medians and CPU times (steadier on a shared machine) of the same interleaved runs.
 *
 * Then POST /v1/verify over HTTP (issue 25): the real API as a child process (bench/servers/foundation.ts, its engine
 * threads as in production), a keep-alive client, JSON base64 and multipart, interleaved with pdfsig on the same
 * 1-signature file for several rounds; each round's medians, and the server's CPU per request split by thread
 * (event loop, the engine thread that ran the job, V8's and libuv's helper threads) from /proc.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { verifyPdf } from '../src/verify/index.js';
import { startBenchServer } from './support.js';
import { CORPUS, makePdf, makePki, signPdf } from '../test/verify/fixtures.js';
import { appendDss, certDer, makeCrl, rootOf, signatureContents } from '../test/verify/ltv-fixtures.js';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const pki = makePki();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-verify-'));
try {
  const trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  const one = signPdf(await makePdf(1), { signer: pki.rsa });
  let three = await makePdf(100, 'Benchmark contract');
  three = signPdf(three, { signer: pki.rsa, fieldName: 'First' });
  three = signPdf(three, { signer: pki.ec, fieldName: 'Second' });
  three = signPdf(three, { signer: pki.rsa, fieldName: 'Third', digest: 'sha384' });
  // B-LTA-shaped: three timestamped signatures, a DSS (chain, CRL, a VRI entry per signature), a document timestamp.
  let lta = await makePdf(100, 'Benchmark contract');
  lta = signPdf(lta, { signer: pki.rsa, fieldName: 'First', timestampBy: pki.tsa });
  lta = signPdf(lta, { signer: pki.ec, fieldName: 'Second', timestampBy: pki.tsa });
  lta = signPdf(lta, { signer: pki.rsa, fieldName: 'Third', digest: 'sha384', timestampBy: pki.tsa });
  const crl = makeCrl(rootOf(pki));
  lta = appendDss(lta, {
    certs: [certDer(pki.caPem), certDer(pki.tsa.certPem)],
    crls: [crl],
    vri: signatureContents(lta).map((signatureCms) => ({ signatureCms, crls: [crl] })),
  });
  lta = signPdf(lta, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'Archive' });
  const ltaLevels = verifyPdf(lta, { trust }).signatures.map((s) => s.level);
  if (ltaLevels.join() !== 'B-LTA,B-LTA,B-LTA,') throw new Error(`B-LTA fixture verified as ${ltaLevels.join()}`);
  const files: Array<{ name: string; bytes: Uint8Array; file: string }> = [
    { name: '1 signature, 1 page', bytes: one, file: path.join(tmp, 'one.pdf') },
    { name: '3 signatures, 100 pages', bytes: three, file: path.join(tmp, 'three.pdf') },
    { name: 'B-LTA: 3 sigs+DSS+doc TS, 100 p', bytes: lta, file: path.join(tmp, 'lta.pdf') },
  ];
  for (const f of files) fs.writeFileSync(f.file, f.bytes);

  const pdfsigOnce = (file: string) => {
    try {
      execFileSync('pdfsig', ['-nocert', file], { stdio: 'ignore' });
    } catch {
      // pdfsig exits non-zero for some corpus files; the time still counts.
    }
  };
  const timed = (f: () => void) => {
    const t = performance.now();
    f();
    return performance.now() - t;
  };
  /**
   * CPU time (user + system, ms) of the waited-for child processes so far, from /proc/self/stat (cutime,
   * cstime; clock ticks of 10 ms, so it is read over many runs). Undefined where /proc is missing.
   */
  const childCpuMs = (): number | undefined => {
    try {
      const stat = fs.readFileSync('/proc/self/stat', 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[13]) + Number(fields[14])) * 10; // fields 16 and 17 of proc(5), at 100 ticks/s
    } catch {
      return undefined;
    }
  };
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  // The machine is shared: Folio and pdfsig runs are interleaved so that both see the same load. Wall time
  // (median) is what a caller sees; CPU time (Folio: process.cpuUsage per call, median; pdfsig: its children's
  // CPU over all runs, mean) moves much less with the load of a shared machine.
  const compare = (bytes: Uint8Array, file: string, runs: number) => {
    for (let i = 0; i < 5; i++) verifyPdf(bytes, { trust }); // warm-up (JIT)
    const folio: number[] = [];
    const folioCpu: number[] = [];
    const pop: number[] = [];
    let popCpu = 0;
    for (let i = 0; i < runs; i++) {
      const c0 = cpuMs();
      folio.push(
        timed(() => {
          if (!verifyPdf(bytes, { trust }).valid) throw new Error('benchmark fixture did not verify');
        }),
      );
      folioCpu.push(cpuMs() - c0);
      const k0 = childCpuMs();
      pop.push(timed(() => pdfsigOnce(file)));
      const k1 = childCpuMs();
      popCpu += k0 !== undefined && k1 !== undefined ? k1 - k0 : NaN;
    }
    return { folio: median(folio), pop: median(pop), folioCpu: median(folioCpu), popCpu: popCpu / runs };
  };

  console.log('verify (median ms per file; Folio in-process with full modification analysis, pdfsig -nocert as a process)');
  console.log('file                             |   bytes | folio ms | pdfsig ms | speed-up | CPU: folio ms | pdfsig ms | speed-up');
  for (const f of files) {
    const { folio, pop, folioCpu, popCpu } = compare(f.bytes, f.file, 25);
    console.log(
      `${f.name.padEnd(32)} | ${String(f.bytes.length).padStart(7)} | ${folio.toFixed(2).padStart(8)} | ${pop.toFixed(2).padStart(9)} | ${`${(pop / folio).toFixed(1)}×`.padStart(8)} | ${folioCpu.toFixed(2).padStart(13)} | ${popCpu.toFixed(1).padStart(9)} | ${(popCpu / folioCpu).toFixed(1)}×`,
    );
  }

  await httpRows(one, path.join(tmp, 'one.pdf'), pdfsigOnce, childCpuMs, median);

  const corpus = (fs.readdirSync(CORPUS, { recursive: true }) as string[]).filter((f) => f.endsWith('.pdf')).map((f) => path.join(CORPUS, f));
  const corpusBytes = corpus.map((f) => new Uint8Array(fs.readFileSync(f)));
  for (let w = 0; w < 3; w++) for (const b of corpusBytes) verifyPdf(b, { trust }); // warm-up (JIT)
  let folioMs = 0;
  let popMs = 0;
  const rounds = 4;
  for (let r = 0; r < rounds; r++) {
    folioMs += timed(() => corpusBytes.forEach((b) => verifyPdf(b, { trust })));
    popMs += timed(() => corpus.forEach(pdfsigOnce));
  }
  const folioFps = (rounds * corpus.length) / (folioMs / 1000);
  const popFps = (rounds * corpus.length) / (popMs / 1000);
  console.log(
    `\nattack corpus (${corpus.length} files): folio ${folioFps.toFixed(1)} files/s, pdfsig -nocert ${popFps.toFixed(1)} files/s → ${(folioFps / popFps).toFixed(1)}× (goal ≥ 3×)`,
  );

  // Hostile input (after the timings above, so its large buffers do not weigh on them): time of one call each (answers are asserted in test/verify/bad-input.test.ts).
  const head = '%PDF-1.7\n1 0 obj\n<</Type /Catalog /Pages 2 0 R>>\nendobj\n2 0 obj\n<</Type /Pages /Kids [] /Count 0>>\nendobj\n';
  const bigXref = `${head}xref\n0 1000000\n0000000000 65535 f \n0000000009 00000 n \n${String(head.indexOf('2 0 obj')).padStart(10, '0')} 00000 n \n${'0000000000 00000 f \n'.repeat(999_997)}trailer\n<</Size 1000000 /Root 1 0 R>>\nstartxref\n${head.length}\n%%EOF\n`;
  const hostile: Array<[string, Uint8Array]> = [
    ['1,000,000-entry xref (20 MB)', new Uint8Array(Buffer.from(bigXref, 'latin1'))],
    [
      '10 MB /Contents',
      new Uint8Array(
        Buffer.concat([
          Buffer.from(one),
          Buffer.from(`\n9999 0 obj\n<</Type /Sig /ByteRange [0 1 2 3] /Contents <${'ab'.repeat(5 * 1024 * 1024)}>>>\nendobj\n`, 'latin1'),
        ]),
      ),
    ],
    ['truncated signed file (half)', one.subarray(0, one.length >> 1)],
  ];
  for (const [name, bytes] of hostile) {
    const t0 = performance.now();
    let outcome: string;
    try {
      outcome = verifyPdf(bytes, { trust }).indication;
    } catch (e) {
      outcome = (e as { code?: string }).code ?? 'error';
    }
    console.log(`hostile: ${name.padEnd(30)} ${(performance.now() - t0).toFixed(0).padStart(5)} ms → ${outcome}`);
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
  pki.cleanup();
}

/** CPU ms per thread of a live process (/proc/<pid>/task/<tid>/stat utime + stime, 10 ms ticks). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return out;
}

/**
 * POST /v1/verify of the 1-signature file over HTTP against pdfsig, interleaved, ROUNDS rounds of RUNS each (the
 * machine is shared: rounds back to back, medians of the round medians). Server CPU per request by thread: the
 * event loop (the process's main thread), the busiest other thread (the engine thread that ran the jobs) and the
 * rest (V8's garbage-collection and compiler threads, libuv).
 */
async function httpRows(
  pdf: Uint8Array,
  file: string,
  pdfsigOnce: (file: string) => void,
  childCpuMs: () => number | undefined,
  median: (xs: number[]) => number,
): Promise<void> {
  const ROUNDS = Number(process.env.VERIFY_HTTP_ROUNDS ?? 5);
  const RUNS = Number(process.env.VERIFY_HTTP_RUNS ?? 60);
  const { child, info } = await startBenchServer<{ api: number; apiKey: string }>('bench/servers/foundation.ts');
  try {
    const pid = child.pid!;
    const url = `http://127.0.0.1:${info.api}/v1/verify`;
    const auth = { authorization: `Bearer ${info.apiKey}` };
    const json = JSON.stringify({ document: { base64: Buffer.from(pdf).toString('base64') } });
    const viaJson = async () => {
      const res = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: json });
      const body = (await res.json()) as { signatureCount?: number };
      if (res.status !== 200 || body.signatureCount !== 1) throw new Error(`verify answered ${res.status}`);
    };
    const viaForm = async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'one.pdf');
      const res = await fetch(url, { method: 'POST', headers: auth, body: form });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`verify answered ${res.status}`);
    };
    const timedAsync = async (f: () => Promise<void>) => {
      const t = performance.now();
      await f();
      return performance.now() - t;
    };
    for (let i = 0; i < 200; i++) await (i % 2 ? viaForm() : viaJson()); // warm-up: JIT, engine thread, key cache
    console.log(
      `\nPOST /v1/verify over HTTP (keep-alive client, 1 signature, ${pdf.length} bytes) against pdfsig -nocert, ${ROUNDS} rounds of ${RUNS}`,
    );
    console.log(
      'round | JSON ms | multipart ms | pdfsig ms | JSON ÷ pdfsig | CPU ms/req: event loop · engine · other = server | pdfsig CPU ms | CPU ratio',
    );
    const rows: Array<{ json: number; form: number; pop: number; cpu: number; popCpu: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const jsonMs: number[] = [];
      const formMs: number[] = [];
      const popMs: number[] = [];
      const before = threadCpu(pid);
      const k0 = childCpuMs();
      for (let i = 0; i < RUNS; i++) {
        jsonMs.push(await timedAsync(viaJson));
        formMs.push(await timedAsync(viaForm));
        const t = performance.now();
        pdfsigOnce(file);
        popMs.push(performance.now() - t);
      }
      const k1 = childCpuMs();
      const after = threadCpu(pid);
      let main = 0;
      let engine = 0;
      let other = 0;
      for (const [tid, ms] of after) {
        const d = (ms - (before.get(tid) ?? 0)) / (2 * RUNS);
        if (tid === String(pid)) main = d;
        else if (d > engine) {
          other += engine;
          engine = d;
        } else other += d;
      }
      const popCpu = k0 !== undefined && k1 !== undefined ? (k1 - k0) / RUNS : NaN;
      const row = { json: median(jsonMs), form: median(formMs), pop: median(popMs), cpu: main + engine + other, popCpu };
      rows.push(row);
      console.log(
        `${String(r + 1).padStart(5)} | ${row.json.toFixed(2).padStart(7)} | ${row.form.toFixed(2).padStart(12)} | ${row.pop.toFixed(2).padStart(9)} | ${`${(row.pop / row.json).toFixed(1)}×`.padStart(13)} | ${main.toFixed(2)} · ${engine.toFixed(2)} · ${other.toFixed(2)} = ${row.cpu.toFixed(2)} | ${popCpu.toFixed(1).padStart(13)} | ${(popCpu / row.cpu).toFixed(1)}×`,
      );
    }
    const m = (k: keyof (typeof rows)[number]) => median(rows.map((x) => x[k]));
    console.log(
      `median of rounds: JSON ${m('json').toFixed(2)} ms, multipart ${m('form').toFixed(2)} ms, pdfsig ${m('pop').toFixed(2)} ms → ${(m('pop') / m('json')).toFixed(1)}× (multipart ${(m('pop') / m('form')).toFixed(1)}×; goal ≥ 3×); CPU ${m('cpu').toFixed(2)} vs ${m('popCpu').toFixed(1)} ms → ${(m('popCpu') / m('cpu')).toFixed(1)}×`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
