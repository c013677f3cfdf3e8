/** Resident memory of a child process as the kernel sees it (LibreOffice allocates natively: only this counts). */
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
