import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

/**
 * The image's build stage without Docker: infra/build-image-steps.sh (npm ci, build, prune) in a copy of the
 * build context, then the pruned tree must still load every entry point's modules. Its `check` step is left out:
 * it is the type check of the same tree that CI runs as `npm run typecheck`, and a second one here cost half a
 * minute of a core. Slow (a full npm ci from the npm cache), so one test with a generous timeout.
 */

const TEN_MINUTES = 600_000;

function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('infra/build-image-steps.sh', () => {
  const context = mkdtempSync(path.join(os.tmpdir(), 'agora-image-'));
  afterAll(() => rmSync(context, { recursive: true, force: true }));

  it(
    'installs, builds and prunes a copy of the build context, which then still runs',
    { timeout: 2 * TEN_MINUTES },
    async () => {
      // The build context as Docker sees it: the tree's files minus the .dockerignore entries.
      const ignored = ['node_modules/', '.data/', 'docs/screenshots/', 'bench/results/'];
      const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
        cwd: ROOT,
        encoding: 'utf8',
      })
        .split('\0')
        .filter((f) => f && !ignored.some((i) => f.startsWith(i)) && existsSync(path.join(ROOT, f)));
      execFileSync('tar', ['-cf', path.join(context, '.context.tar'), '--null', '-T', '-'], {
        cwd: ROOT,
        input: files.join('\0'),
      });
      execFileSync('tar', ['-xf', '.context.tar'], { cwd: context });
      rmSync(path.join(context, '.context.tar'));

      for (const step of ['install', 'build', 'prune']) {
        const done = await run('bash', ['infra/build-image-steps.sh', step], context, TEN_MINUTES);
        expect(done.code, `${step}: ${done.output.slice(-3000)}`).toBe(0);
      }

      for (const runtimeDependency of ['fastify', 'bullmq', 'prom-client', '@bull-board/fastify']) {
        expect(existsSync(path.join(context, 'node_modules', runtimeDependency)), runtimeDependency).toBe(
          true,
        );
      }
      // The install applied patches/ (postinstall), and the prune kept the patched driver.
      expect(readFileSync(path.join(context, 'node_modules/postgres/src/connection.js'), 'utf8')).toContain(
        "Agora's patch",
      );
      // tsx too: the image runs compiled code; tsx is for development.
      for (const devDependency of ['vitest', 'eslint', 'playwright-core', 'drizzle-kit', 'tsx']) {
        expect(existsSync(path.join(context, 'node_modules', devDependency)), devDependency).toBe(false);
      }
      // The runtime stage's command (plain node, compiled code), on every entry point's module graph
      // (nothing listens: imports only).
      for (const asset of ['dist/shared/db/migrations', 'dist/shared/ai/models/spam-model.json', 'dist/data'])
        expect(existsSync(path.join(context, asset)), asset).toBe(true);
      const smoke = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "for (const m of ['./dist/services/qa/app.js', './dist/services/verify/app.js', './dist/workers/registry.js', './dist/roles/process.js']) await import(m); console.log('entry points load');",
        ],
        context,
        120_000,
      );
      expect(smoke.output).toContain('entry points load');
      expect(smoke.code).toBe(0);
    },
  );
});
