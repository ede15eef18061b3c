import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ADMIN_URL } from '../support/postgres.js';

const run = promisify(execFile);

/**
 * postgres.js 3.4.9 keeps executing a transaction's rollback, or a reserved connection's queries, on a connection
 * whose socket closed; its deferred write then throws from an immediate (`Cannot read properties of null (reading
 * 'write')`), which nothing can catch: a PostgreSQL restart under write load ended the Q&A service. Its teardown
 * also left a cancelled write behind, so a connection that closed with one never opened again. patches/ mends
 * both (applied by `npm ci`'s postinstall); each scenario runs in a process of its own so that an uncaught
 * exception shows as that process's exit, with a pool of one connection so that a lost or poisoned connection
 * shows as the next query never answering.
 */
async function scenario(body: string): Promise<{ code: number; output: string }> {
  const script = `
    import postgres from 'postgres';
    process.on('uncaughtException', (err) => { console.log('uncaught: ' + err.message); process.exit(3); });
    const sql = postgres(${JSON.stringify(ADMIN_URL)}, { max: 1, onnotice: () => {} });
    const other = postgres(${JSON.stringify(ADMIN_URL)}, { max: 1, onnotice: () => {} });
    const terminate = (pid) => other\`SELECT pg_terminate_backend(\${pid})\`;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    ${body}
    const [{ answer }] = await Promise.race([
      sql\`SELECT 42 AS answer\`,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the pool never answered again')), 10000).unref()),
    ]);
    console.log('next query: ' + answer);
    await sql.end({ timeout: 5 });
    await other.end({ timeout: 5 });
  `;
  try {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 60_000,
    });
    return { code: 0, output: stdout };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('a PostgreSQL connection whose backend goes away', { timeout: 90_000 }, () => {
  it('rejects the rest of a reserved connection’s queries, and the pool answers after its release', async () => {
    const { code, output } = await scenario(`
      const reserved = await sql.reserve();
      const [{ pid }] = await reserved\`SELECT pg_backend_pid() AS pid\`;
      await terminate(pid);
      await settle();
      const error = await reserved\`SELECT 1\`.then(() => 'none', (err) => err.code);
      console.log('reserved query: ' + error);
      reserved.release();
    `);
    expect(output).toContain('reserved query: CONNECTION_CLOSED');
    expect(output).toContain('next query: 42');
    expect(code).toBe(0);
  });

  it('rejects a transaction whose backend died, and the pool answers the next query', async () => {
    const { code, output } = await scenario(`
      const error = await sql
        .begin(async (tx) => {
          const [{ pid }] = await tx\`SELECT pg_backend_pid() AS pid\`;
          await terminate(pid);
          await settle();
          await tx\`SELECT 1\`;
        })
        .then(() => 'none', (err) => err.code);
      console.log('transaction: ' + error);
      await settle();
    `);
    expect(output).toMatch(/transaction: CONNECTION_(CLOSED|ENDED|DESTROYED)/);
    expect(output).toContain('next query: 42');
    expect(code).toBe(0);
  });
});
