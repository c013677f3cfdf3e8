/** Resident memory of a child process as the kernel sees it (LibreOffice allocates natively: only this counts), and its sampling. */
import fs from 'node:fs';

/**
 * Resident memory of a process in bytes, from /proc/<pid>/status (VmRSS, in kB: no page-size guess), or
 * undefined when it cannot be read (not Linux, process gone).
 */
export function readRss(pid: number): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return undefined;
  }
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/**
 * Samples `pid`'s resident memory every `everyMs` while `onSample` returns true (it sees each reading);
 * stops by itself when the process is gone or /proc is unavailable. Returns the stop.
 */
export function watchRss(pid: number, everyMs: number, onSample: (rss: number) => boolean): () => void {
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const rss = readRss(pid);
    if (rss === undefined || !onSample(rss)) return;
    timer = setTimeout(sample, everyMs);
  };
  timer = setTimeout(sample, everyMs);
  return () => clearTimeout(timer);
}
