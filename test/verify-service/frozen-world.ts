import { buildVerifyApp } from '../../services/verify/app.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from './helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from './slow-smtp.js';

/** The addresses of `slow.test` the worker-kill tests verify: ann, ben and cat exist, nobody does; ann twice. */
export const FROZEN_EMAILS = [
  'ann@slow.test',
  'ben@slow.test',
  'nobody@slow.test',
  'cat@slow.test',
  'ann@slow.test',
];

export interface FrozenWorld {
  smtp: SlowSmtpWorld;
  runtime: TestRuntime;
  app: Awaited<ReturnType<typeof buildVerifyApp>>;
  key: string;
  /** Resolves at the first RCPT the mail server sees: the first worker is then surely mid-probe. */
  rcptSeen: Promise<void>;
  /** Starts a worker process serving `queue` and waits until it is up. */
  startWorker(queue: string): Promise<RunningProcess>;
  close(): Promise<void>;
}

/**
 * The world of the worker-kill tests: one MX host at `host` whose first session freezes after its first RCPT (so
 * a worker is surely mid-probe when it is killed) and whose later sessions answer each command after `delayMs`;
 * the step timeouts are longer than the test, so the frozen session never ends by itself.
 */
export async function startFrozenWorld(
  host: string,
  delayMs: number,
  env: Record<string, string>,
): Promise<FrozenWorld> {
  let firstRcpt: () => void = () => {};
  const rcptSeen = new Promise<void>((resolve) => (firstRcpt = resolve));
  const smtp = await startSlowSmtp([host], {
    delayMs,
    accepts: (a) => /^(ann|ben|cat)@/.test(a),
    onRcpt: () => firstRcpt(),
    freezeAfterFirstRcpt: (connection) => connection === 1,
  });
  const dns: DnsServer = await startDnsServer({
    'slow.test': { MX: [{ preference: 10, exchange: 'mx.slow.test' }] },
    'mx.slow.test': { A: [host] },
  });
  const runtime = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, {
      VERIFY_SMTP_TIMEOUT_MS: '120000',
      VERIFY_PROBE_TIMEOUT_MS: '150000',
      ...env,
    }),
  );
  const app = await buildVerifyApp(runtime);
  const { verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string };
  const workers: RunningProcess[] = [];
  return {
    smtp,
    runtime,
    app,
    key,
    rcptSeen,
    startWorker: async (queue) => {
      const worker = startProcess('workers/main.ts', ['--queues', queue], runtime.env);
      workers.push(worker);
      // Generous: a worker boots in seconds, but took over 30 s on a loaded 2-core machine with other files' workers.
      await worker.waitFor(/workers started/, 90_000);
      return worker;
    },
    close: async () => {
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await app.close();
      await runtime.close();
      await smtp.close();
      await dns.close();
    },
  };
}
