/** Fake cgroup trees for the CPU-quota and memory-limit tests: files under a temporary root, and the process's own cgroup file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A factory of fake cgroup roots under one temporary folder; `remove()` deletes them all (afterAll). */
export function fakeCgroups(prefix: string): {
  fake(files: Record<string, string>, procSelfCgroup?: string): { cgroupRoot: string; procSelfCgroup: string };
  remove(): void;
} {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let n = 0;
  return {
    fake(files, procSelfCgroup = '0::/\n') {
      const root = path.join(tmp, `root-${n++}`);
      fs.mkdirSync(root, { recursive: true });
      for (const [rel, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), content);
      }
      const self = path.join(root, '.self-cgroup');
      fs.writeFileSync(self, procSelfCgroup);
      return { cgroupRoot: root, procSelfCgroup: self };
    },
    remove: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}
