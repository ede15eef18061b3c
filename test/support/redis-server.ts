import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectRedis } from '../../shared/redis.js';

/**
 * A redis-server of the test's own on `port`, without persistence, so the test can take it away and bring it back
 * (empty) without touching the shared one. Resolves once it answers, or after about 10 s of trying.
 */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const probe = connectRedis(`redis://127.0.0.1:${port}`, 'producer', {
    lazyConnect: true,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  for (let attempt = 0; attempt < 200; attempt++) {
    if (
      await probe.connect().then(
        () => true,
        () => false,
      )
    )
      break;
    await sleep(50);
  }
  probe.disconnect();
  return child;
}
