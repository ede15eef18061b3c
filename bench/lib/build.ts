import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes.js';

const run = promisify(execFile);

/**
 * The production build (`npm run build`: tsconfig.build.json, then infra/build-assets.sh) into a directory of
 * the bench's own, with what the image has beside dist/ (package.json for "type": "module", node_modules), so
 * that a bench compares the compiled code with tsx in one run without touching the tree's dist/.
 */
export async function buildInto(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agora-bench-dist-'));
  await run(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dir],
    {
      cwd: ROOT,
    },
  );
  await run('bash', ['infra/build-assets.sh', dir], { cwd: ROOT });
  copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
