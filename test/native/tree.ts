/** /proc readings about a server's children, for the native-runner tests and measurements. */
import fs from 'node:fs';
import { descendants } from '../adversarial/server.js';

/** The `State:` letter of a pid (R, S, Z, …), or undefined once it is gone (reaped). */
export function processState(pid: number): string | undefined {
  try {
    return /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Live (not zombie) SVG rasteriser children under `root`. */
export function svgChildren(root: number): number[] {
  return descendants(root)
    .filter((d) => processState(d.pid) !== 'Z' && cmdline(d.pid).includes('svg-raster-child'))
    .map((d) => d.pid);
}

/**
 * Descendants of `root` outside its LibreOffice workers (the office pool's forked `office/worker` processes
 * and everything under them), with their state: zombies included, since a zombie has no command line.
 */
export function besidesOffice(root: number): Array<{ pid: number; name: string; state: string | undefined }> {
  const all = descendants(root);
  const office = new Set<number>();
  for (const d of all) {
    if (/\/office\/worker\.[jt]s/.test(cmdline(d.pid))) {
      office.add(d.pid);
      for (const below of descendants(d.pid)) office.add(below.pid);
    }
  }
  return all
    .filter((d) => !office.has(d.pid))
    .map((d) => ({ pid: d.pid, name: d.name, state: processState(d.pid) }))
    .filter((d) => d.state !== undefined);
}
