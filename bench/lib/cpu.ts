import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time used by the processes of this machine between two snapshots, grouped by role (read from /proc, so Linux
 * only; elsewhere the snapshot is empty). A bench shows with it whether its run was CPU-bound: the sum of the
 * roles against cores × wall time.
 */

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node runs on

/** pid → [command line, user + system ticks]. */
export type CpuSnapshot = Map<number, [string, number]>;

export function cpuSnapshot(): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return snapshot;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command name (which may hold spaces): utime is the 14th, stime the 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      snapshot.set(Number(pid), [cmdline, ticks]);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return snapshot;
}

/**
 * CPU seconds per role between `before` and `after`; `roleOf` names a process from its command line (undefined:
 * not counted). A process that started in between counts from zero.
 */
export function cpuSecondsByRole(
  before: CpuSnapshot,
  after: CpuSnapshot,
  roleOf: (cmdline: string, pid: number) => string | undefined,
): Map<string, number> {
  const byRole = new Map<string, number>();
  for (const [pid, [cmdline, ticks]] of after) {
    const role = roleOf(cmdline, pid);
    if (!role) continue;
    const used = (ticks - (before.get(pid)?.[1] ?? 0)) / TICKS_PER_SECOND;
    byRole.set(role, (byRole.get(role) ?? 0) + used);
  }
  return byRole;
}

/** `pid` and every process below it (a tsx launcher runs the script in a child node process), read from /proc. */
export function processTree(pid: number): Set<number> {
  const parents = new Map<number, number>();
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // ended meanwhile
      }
    }
  } catch {
    return new Set([pid]);
  }
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parents) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  return tree;
}

/**
 * The PostgreSQL backends serving one database: their command line names it ("postgres: [cluster: ]user database host …"),
 * so that other databases' work on a shared machine is not counted. Autovacuum workers name it too, but their work
 * belongs to the writes (a freshly loaded database's), not to the reads a bench measures.
 */
export const isBackendOf = (cmdline: string, database: string): boolean =>
  cmdline.startsWith('postgres: ') &&
  !cmdline.includes('autovacuum') &&
  cmdline.split(' ').slice(1, 5).includes(database);
