import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// `npm start` as a user runs it, stopped by a SIGTERM to npm's own pid (a process manager, `kill <pid>`): the
// server stops gracefully. Through npm's shell and tsx's wrapper the signal stopped npm and left the server running,
// still holding its ports.
describe('npm start stopped with SIGTERM', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(() => runtime?.close());

  it('shuts the server down gracefully', async () => {
    const npm = spawn('npm', ['start', '--', '--role', 'qa'], {
      cwd: ROOT,
      env: { ...process.env, ...runtime.env, QA_PORT: '0', LOG_LEVEL: 'info', DEMO_DATA: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own: what the test leaves behind on a failure can be killed as a whole.
      detached: true,
    });
    let output = '';
    const seen = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} in:\n${output.slice(-2000)}`)),
          60_000,
        );
        const collect = (chunk: Buffer) => {
          output += chunk.toString();
          if (pattern.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        };
        npm.stdout.on('data', collect);
        npm.stderr.on('data', collect);
        if (pattern.test(output)) resolve();
      });
    let ended = false;
    const closed = new Promise<void>((resolve) =>
      npm.on('close', () => {
        ended = true;
        resolve();
      }),
    );
    try {
      await seen(/"msg":"ready"/);
      npm.kill('SIGTERM');
      await seen(/"msg":"stopped"/);
      await closed;
    } finally {
      if (!ended) process.kill(-npm.pid!, 'SIGKILL');
    }
    expect(output).toMatch(/"signal":"SIGTERM","msg":"shutting down"/);
  }, 90_000);
});

// Ctrl-C on `npm start`: the terminal sends SIGINT to npm and to the server, and npm forwards its copy to the
// server, which saw a "second SIGINT" and exited at once (exit 1, no graceful stop) whenever the copy came in after
// the shutdown had begun. Here the copy is sent as soon as the shutdown has begun.
describe('a second SIGINT right after the first (Ctrl-C through npm)', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(() => runtime?.close());

  it('does not cut the graceful shutdown short', async () => {
    const server = startProcess('bin/start.ts', ['--role', 'qa'], {
      ...runtime.env,
      QA_PORT: '0',
      DEMO_DATA: 'false',
    });
    try {
      await server.waitFor(/"msg":"ready"/);
      server.child.kill('SIGINT');
      await server.waitFor(/"msg":"shutting down"/);
      server.child.kill('SIGINT');
      const code = await server.exited;
      expect(server.output()).not.toMatch(/second SIGINT/);
      expect(server.output()).toMatch(/"msg":"stopped"/);
      expect(code).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 90_000);
});

// A stop signal while the process is still starting (migrations, the first start's demo import, the listens, the
// worker pool): the signal handlers were installed only once 'ready' was logged, so before that Node's default
// killed the process on the spot (no exit code, the embedded database left open, a private redis-server orphaned).
describe('SIGTERM during start-up', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(() => runtime?.close());

  it('finishes the step under way, stops what has started and exits 0', async () => {
    const server = startProcess('bin/start.ts', [], {
      ...runtime.env,
      QA_PORT: '0',
      VERIFY_PORT: '0',
      DEMO_DATA: 'false',
    });
    try {
      // Logged before the apps are built and the workers started: the signal comes while those steps run.
      await server.waitFor(/"msg":"runtime ready"/);
      server.child.kill('SIGTERM');
      const code = await server.exited;
      expect(server.output()).toMatch(/"msg":"stopped"/);
      expect(code).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 90_000);
});

// `npm run start:prod:workers` stopped with a SIGTERM to npm: without `exec`, npm's shell stood between npm and
// node, npm and the shell died (exit 143) and the worker went on running, orphaned, holding its jobs. The test
// above runs `npm start`; the compiled entry points need a build, so here every start script is checked to hand
// npm's process over to node as `npm start` does.
describe('the start scripts of package.json', () => {
  it('run node in place of npm’s shell, so that npm’s stop signal reaches it', async () => {
    const { default: pkg } = await import('../../package.json', { with: { type: 'json' } });
    const scripts = Object.entries(pkg.scripts as Record<string, string>).filter(
      ([name, command]) => name.startsWith('start') && /^(exec )?node /.test(command),
    );
    expect(scripts.map(([name]) => name)).toEqual(
      expect.arrayContaining(['start', 'start:workers', 'start:prod', 'start:prod:workers']),
    );
    for (const [name, command] of scripts) expect(command, name).toMatch(/^exec node /);
  });
});

/** The processes descended from `pid`, read from /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so read past its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents)
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
  };
  walk(pid);
  return found;
}

/** Running: a zombie (state Z: exited, not yet reaped by its new parent, which in a container may never come) is not. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

// `npm run dev` was a shell pipeline (`tsx watch … | tsx bin/pretty-logs.ts`): a SIGTERM to npm ended npm and its
// shell and left the watcher, the server and the log printer running. bin/dev.ts now stands in front of them.
describe('npm run dev stopped with SIGTERM', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(() => runtime?.close());

  it('stops the server gracefully and leaves no process behind', async () => {
    const npm = spawn('npm', ['run', 'dev', '--', '--role', 'qa'], {
      cwd: ROOT,
      env: { ...process.env, ...runtime.env, QA_PORT: '0', LOG_LEVEL: 'info', DEMO_DATA: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)));
    const seen = async (pattern: RegExp) => {
      const deadline = Date.now() + 60_000;
      while (!pattern.test(output)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    let started: number[] = [];
    try {
      // The log lines come made readable: "<time> INFO  agora-qa: ready {…}".
      await seen(/INFO +agora-qa: ready/);
      started = descendants(npm.pid!);
      npm.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toMatch(/agora-qa: shutting down \{"signal":"SIGTERM"\}/);
      expect(output).toMatch(/agora-qa: stopped/);
      // A helper the watcher ran (esbuild's service) ends when it reads the end of its input, just after.
      const deadline = Date.now() + 30_000;
      while (started.some(alive) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started.filter(alive)).toEqual([]);
    } finally {
      for (const pid of [npm.pid!, ...started]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);
});
