import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Runs one command of ours (a seed, an import) to its end and measures what it cost: wall time, CPU seconds of
 * the command's own process and of the PostgreSQL backends of its database (with the parallel workers they
 * start for index builds), and the process's peak RSS. Sampled from /proc every 250 ms, so Linux only; on a
 * shared machine the CPU figures hold up where wall time does not, as they count only the command's processes.
 */
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node runs on

interface Sample {
  cmdline: string;
  parent: number;
  ticks: number;
  rssKiB: number;
}

function processes(): Map<number, Sample> {
  const found = new Map<number, Sample>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the parenthesised command name (which may hold spaces): utime is the 14th, stime the 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1];
      found.set(Number(name), {
        cmdline,
        parent: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        rssKiB: Number(rss ?? 0),
      });
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

export interface ChildCost {
  seconds: number;
  nodeCpu: number;
  postgresCpu: number;
  peakRssMiB: number;
  output: string;
}

/** Whether pid is root or one of its descendants (tsx runs the script in a child process of its own). */
function descends(all: Map<number, Sample>, pid: number, root: number): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 16; p = all.get(p)?.parent ?? 0, hops++)
    if (p === root) return true;
  return false;
}

/** `tsx <script> ...args` in `dir` against `databaseUrl` (database `database`). */
export async function measureChild(options: {
  dir: string;
  script: string;
  args: string[];
  databaseUrl: string;
  database: string;
}): Promise<ChildCost> {
  const started = performance.now();
  const child = spawn(`${options.dir}/node_modules/.bin/tsx`, [options.script, ...options.args], {
    cwd: options.dir,
    env: { ...process.env, DATABASE_URL: options.databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  // The highest tick count seen per process: a backend is gone once the command disconnects.
  const node = new Map<number, number>();
  const postgres = new Map<number, number>();
  let peakRss = 0;
  const poll = () => {
    const all = processes();
    const backends = new Set<number>();
    for (const [pid, s] of all) {
      if (descends(all, pid, child.pid!)) {
        node.set(pid, s.ticks);
        peakRss = Math.max(peakRss, s.rssKiB);
      } else if (s.cmdline.startsWith('postgres: ') && s.cmdline.includes(` ${options.database} `)) {
        postgres.set(pid, s.ticks);
        backends.add(pid);
      }
    }
    for (const [pid, s] of all) {
      const leader = /^postgres: parallel worker for PID (\d+)/.exec(s.cmdline)?.[1];
      if (leader && backends.has(Number(leader))) postgres.set(pid, s.ticks);
    }
  };
  const timer = setInterval(poll, 250);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(timer);
  if (code !== 0) throw new Error(`${options.script} in ${options.dir} exited with ${code}:\n${output}`);
  const cpu = (m: Map<number, number>) => [...m.values()].reduce((n, t) => n + t, 0) / TICKS_PER_SECOND;
  return {
    seconds: (performance.now() - started) / 1000,
    nodeCpu: cpu(node),
    postgresCpu: cpu(postgres),
    peakRssMiB: Math.round(peakRss / 1024),
    output,
  };
}
