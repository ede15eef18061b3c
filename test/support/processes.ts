import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunningProcess {
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** What it printed on stdout alone. */
  stdout(): string;
  /** Resolves when a line matching pattern has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts one of the project's entry points (e.g. `workers/main.ts`) as a real child process; `loader: false`
 * runs compiled JavaScript with plain node, as production does.
 */
export function startProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  options: { loader?: boolean } = {},
): RunningProcess {
  // One node process with tsx's loader (not the tsx CLI, which wraps a second process): its pid is the
  // worker's pid and signals reach it directly, as they would in production.
  const loader = options.loader === false ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...loader, script, ...args], {
    cwd: ROOT,
    // Children log at info whatever the test runtime uses: tests wait for their log lines.
    env: { ...process.env, ...env, LOG_LEVEL: env.CHILD_LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  return {
    child,
    output: () => output,
    stdout: () => stdout,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern} in output:\n${output.slice(-2000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
        exited.then(() => {
          if (!pattern.test(output)) {
            clearTimeout(timer);
            reject(new Error(`process exited before ${pattern}:\n${output.slice(-2000)}`));
          }
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs an entry point to completion and returns its exit code and output. */
export async function runProcess(script: string, args: string[], env: Record<string, string>) {
  const p = startProcess(script, args, env);
  const code = await p.exited;
  return { code, output: p.output(), stdout: p.stdout() };
}
