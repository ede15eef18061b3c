import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prettyPrint } from './pretty-logs.js';

/**
 * `npm run dev`: everything `npm start` runs, under `tsx watch` (restarted on every change), with its JSON log lines
 * made readable. One process stands in front of it, so that a SIGTERM or SIGINT sent to it (npm execs it) reaches the
 * server exactly once: as a shell pipeline under npm, a SIGTERM to npm ended npm and left the watcher, the server
 * and the log printer running. The watcher gets a process group of its own, so a terminal's Ctrl-C, which reaches
 * this process's group, comes to it only from here.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const watcher = spawn(
  path.join(root, 'node_modules', '.bin', 'tsx'),
  ['watch', path.join(root, 'bin', 'start.ts'), ...process.argv.slice(2)],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], detached: true },
);
prettyPrint(watcher.stdout);
// Passed on once: a Ctrl-C reaches this process twice (from the terminal, and from npm, which forwards it), and a
// second signal makes tsx kill the server instead of waiting for its graceful stop.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    watcher.kill(signal);
  });
watcher.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 1)));
