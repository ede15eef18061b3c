import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

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
  options: { port: number; readyPath?: string; timeoutMs?: number },
): Promise<BenchServer> {
  const child = spawn(TSX, [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await once(child, 'exit');
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
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
  throw new Error(`${script} not ready after ${options.timeoutMs ?? 60_000} ms:\n${output}`);
}
