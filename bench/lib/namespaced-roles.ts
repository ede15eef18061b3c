import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, stopChild, waitFor } from './processes.js';
import type { VirtualHost } from './netns.js';

/**
 * Agora roles run as real processes inside the namespaces of a virtual network (bench/lib/netns.ts): `node
 * --import tsx <script>` under `ip netns exec`, so each one sees only its host's address and reaches PostgreSQL,
 * Redis, DNS and the mail servers over the virtual network. Their output goes to one log file per role.
 */

export interface Role {
  host: VirtualHost;
  child: ChildProcess;
  log: string;
}

export class NamespacedRoles {
  readonly roles: Role[] = [];

  constructor(private readonly logDir: string) {
    mkdirSync(logDir, { recursive: true });
  }

  start(host: VirtualHost, script: string, args: string[], env: Record<string, string>): Role {
    const child = spawn(
      'ip',
      ['netns', 'exec', host.namespace, process.execPath, '--import', 'tsx', script, ...args],
      { cwd: ROOT, env: { ...process.env, ...env, HOST: host.address }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const log = path.join(this.logDir, `${host.name}.log`);
    const out = createWriteStream(log);
    child.stdout!.pipe(out, { end: false });
    child.stderr!.pipe(out, { end: false });
    child.once('exit', () => out.end());
    const role = { host, child, log };
    this.roles.push(role);
    return role;
  }

  /** Waits (timeoutMs) until `url` answers 2xx; fails at once if the role exited. */
  async ready(role: Role, url: string, timeoutMs: number): Promise<void> {
    await waitFor(`${role.host.name} (${url})`, timeoutMs, async () => {
      if (role.child.exitCode !== null) throw new Error(`${role.host.name} exited; see ${role.log}`);
      return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok ? true : undefined;
    }).catch((err: Error) => {
      if (role.child.exitCode !== null)
        throw new Error(`${role.host.name} exited with ${role.child.exitCode}`);
      throw err;
    });
  }

  /** SIGTERM to every role, SIGKILL to any still alive 15 s later. */
  stopAll = (): Promise<void> => Promise.all(this.roles.map((r) => stopChild(r.child))).then(() => {});

  /** For an exit handler: no waiting. */
  killAll(): void {
    for (const r of this.roles)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  }
}
