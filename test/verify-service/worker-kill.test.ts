import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from './helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from './slow-smtp.js';

// A worker killed in the middle of a bulk request loses nothing: its job's lock expires, another worker process
// takes the job over (BullMQ stalled-job recovery) and the waiting request still answers in full.

const SLOW = '127.0.5.20';
const emails = ['ann@slow.test', 'ben@slow.test', 'nobody@slow.test', 'cat@slow.test', 'ann@slow.test'];

describe('a verify worker killed mid-probe', () => {
  let dns: DnsServer;
  let smtp: SlowSmtpWorld;
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildVerifyApp>>;
  let key: string;
  const workers: RunningProcess[] = [];
  let firstRcpt: () => void;
  const rcptSeen = new Promise<void>((resolve) => (firstRcpt = resolve));

  beforeAll(async () => {
    // The first session freezes after its first RCPT (the catch-all probe), so the first worker is surely mid-probe
    // when it is killed, however long the second one takes to boot. Later sessions answer each command in 100 ms.
    smtp = await startSlowSmtp([SLOW], {
      delayMs: 100,
      accepts: (a) => /^(ann|ben|cat)@/.test(a),
      onRcpt: () => firstRcpt(),
      freezeAfterFirstRcpt: (connection) => connection === 1,
    });
    dns = await startDnsServer({
      'slow.test': { MX: [{ preference: 10, exchange: 'mx.slow.test' }] },
      'mx.slow.test': { A: [SLOW] },
    });
    // A step timeout longer than the test: the frozen session never ends by itself. The request waits 2 minutes.
    // The job lock and the stalled check are the defaults (dispatch-timers.ts).
    runtime = await createTestRuntime(
      worldEnv(dns.endpoint, smtp.port, {
        VERIFY_SMTP_TIMEOUT_MS: '120000',
        VERIFY_PROBE_TIMEOUT_MS: '150000',
        VERIFY_BULK_DEADLINE_MS: '120000',
      }),
    );
    app = await buildVerifyApp(runtime);
    ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await app?.close();
    await runtime?.close();
    await smtp?.close();
    await dns?.close();
  });

  const startWorker = async () => {
    const worker = startProcess('workers/main.ts', ['--queues', 'verify'], runtime.env);
    workers.push(worker);
    // Booting a worker (tsx, the engine) took over 30 s on a loaded 2-core machine with another file's workers.
    await worker.waitFor(/workers started/, 60_000);
    return worker;
  };

  it('is replaced by another worker and the request answers with every result', async () => {
    const first = await startWorker();
    const answer = app.inject({
      method: 'POST',
      url: '/bulk-verify',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: { emails },
    });

    await rcptSeen;
    // The second worker is up before the first dies; the job stays locked by the first (it renews its lock).
    await startWorker();
    const stats = smtp.stats.get(SLOW)!;
    expect(stats.connections).toBe(1);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const res = await answer;
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(emails.length);
    expect(body.data.map((r: { email: string }) => r.email)).toEqual(emails);
    expect(body.data.map((r: { status: string }) => r.status)).toEqual([
      'valid',
      'valid',
      'invalid',
      'valid',
      'valid',
    ]);
    expect(body.data[2]).toMatchObject({ reason: 'mailbox_not_found' });
    // The second worker probed the group again in a session of its own.
    expect(stats.connections).toBe(2);
  }, 180_000);
});
