import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { REDIS_URL } from './redis.js';

/** Helpers every HTTP bench shares: free ports, a server as a child process, readiness by polling a URL. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/**
 * The environment every bench child shares: its own database and QUEUE_PREFIX, loopback, quiet production
 * logging. Callers add ports, rate-limit switches and the like.
 */
export const benchEnv = (databaseUrl: string, queuePrefix: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  QUEUE_PREFIX: queuePrefix,
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
});

/** SIGTERM, SIGKILL if still alive 15 s later; resolves once the child has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

/** Polls `probe` every intervalMs until it returns a value (errors count as "not yet"); throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

/** Waits until `${url}/health` answers 2xx. */
export const waitForHealth = (url: string, timeoutMs: number): Promise<true> =>
  waitFor(
    `${url}/health`,
    timeoutMs,
    async () => ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok ? true : undefined),
    200,
  );

/**
 * Runs `tsx <script> ...args` to completion (a CLI: seed, admin) and throws unless it exits 0. Its stderr shows
 * on the bench's; its stdout is returned ('capture') or sent to the bench's stderr ('stderr', output kept
 * out of the bench's result on stdout).
 */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  stdout: 'capture' | 'stderr' = 'capture',
): Promise<string> {
  const child = spawn(TSX, [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout === 'capture' ? 'pipe' : 2, 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}`);
  return out;
}

/**
 * The long-running children of one bench (servers, workers): started with `tsx`, stdout dropped, stderr shown
 * on the bench's (they log at warn), and stopped together whatever happened.
 */
export class BenchChildren {
  private readonly children: ChildProcess[] = [];

  start(script: string, args: string[], env: Record<string, string>): ChildProcess {
    // BENCH_CPU_PROF=<dir>: every long-running child writes a V8 CPU profile there when it exits.
    const profileDir = process.env.BENCH_CPU_PROF;
    const [command, commandArgs] = profileDir
      ? [process.execPath, ['--cpu-prof', '--cpu-prof-dir', profileDir, '--import', 'tsx', script, ...args]]
      : [TSX, [script, ...args]];
    const child = spawn(command, commandArgs, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    this.children.push(child);
    return child;
  }

  /** Starts an HTTP server and waits (60 s at most) until `${url}/health` answers. */
  async startHealthy(
    script: string,
    args: string[],
    env: Record<string, string>,
    url: string,
  ): Promise<void> {
    this.start(script, args, env);
    await waitForHealth(url, 300_000);
  }

  /** SIGTERM to all at once, then waits for every one to exit. */
  async stopAll(): Promise<void> {
    await Promise.all(this.children.map(stopChild));
  }
}

export interface BenchServer {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `tsx <script> ...args` with env, then polls `readyPath` until it answers 200 (or the process dies, or
 * timeoutMs passes). The child inherits nothing on stdio; its last output is kept for error messages.
 */
export async function startServer(
  script: string,
  args: string[],
  env: Record<string, string>,
  options: { port: number; readyPath?: string; timeoutMs?: number; cwd?: string },
): Promise<BenchServer> {
  // `cwd`: another checkout of the project (its own tsx), for benches that compare two versions in one run.
  const child = spawn(options.cwd ? `${options.cwd}/node_modules/.bin/tsx` : TSX, [script, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${options.port}`;
  const stop = () => stopChild(child);
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}${options.readyPath ?? '/health'}`, {
        signal: AbortSignal.timeout(2000),
      });
      if (res.ok) return { url, child, output: () => output, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`${script} not ready after ${options.timeoutMs ?? 300_000} ms:\n${output}`);
}

/**
 * The Q&A service alone (`--role qa`) as the read benches measure it: no read cache (every request reaches the
 * database), no rate limits. `cwd`: another checkout of the project, for benches that compare two versions.
 */
export async function startUncachedQa(
  databaseUrl: string,
  queuePrefix: string,
  cwd?: string,
): Promise<BenchServer> {
  const port = await freePort();
  return startServer(
    'bin/start.ts',
    ['--role', 'qa'],
    {
      ...benchEnv(databaseUrl, queuePrefix),
      QA_PORT: String(port),
      RATE_LIMIT_ENABLED: 'false',
      QA_READ_CACHE_TTL_MS: '0',
      // Production refuses to start without one; a bench's own, never used for anything it signs.
      APP_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    },
    { port, readyPath: '/api/categories', ...(cwd ? { cwd } : {}) },
  );
}
