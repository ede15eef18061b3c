import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { pollsRepository } from '../../shared/db/repositories/polls.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { countsFromVotes, eventually, poll, storedTally } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

/**
 * The proof that aggregation loses and doubles nothing: thousands of concurrent voters across two app instances,
 * tallied by two worker processes, end with stored counts equal to the votes table and to what was sent.
 */
describe('poll tallies under concurrent voting', () => {
  let runtime: TestRuntime;
  let apps: App[];
  const workers: RunningProcess[] = [];

  // Distinct anonymous voters: distinct client addresses behind the trusted proxy.
  const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const vote = (voter: number, pollId: number, optionId: number) =>
    apps[voter % apps.length]!.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'x-forwarded-for': address(voter) },
      payload: { poll_id: pollId, option_id: optionId },
    });

  /** Settled: no tally job waits, is delayed or runs (the `close` scheduler's next run always waits). */
  const settled = () =>
    eventually(
      async () =>
        (await runtime.queues.queue('polls').getJobs(['active', 'waiting', 'delayed', 'prioritized'])).filter(
          (job) => job?.name === 'tally',
        ).length,
      (pending) => pending === 0,
      60_000,
    );
  const closedEvents = async (pollId: number) =>
    (
      await runtime.database.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM qa_changes WHERE type = 'poll' AND entity_id = ${pollId} AND event = 'poll.closed'`,
      )
    )[0]!.n;

  beforeAll(async () => {
    runtime = await createTestRuntime({ TRUST_PROXY: 'true', RATE_LIMIT_ENABLED: 'false' });
    apps = [await buildQaApp(runtime), await buildQaApp(runtime)];
    for (let i = 0; i < 2; i++)
      workers.push(
        startProcess('workers/main.ts', ['--queues', 'polls'], { ...runtime.env, WORKER_METRICS_PORT: '0' }),
      );
    await Promise.all(workers.map((w) => w.waitFor(/workers started/)));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(apps.map((a) => a.close()));
    await runtime.close();
  });

  it('2000 concurrent votes from distinct voters: the settled tally equals the votes table exactly', async () => {
    const p = await poll(runtime, { texts: ['A', 'B', 'C', 'D'] });
    const VOTERS = 2000;
    const choice = (voter: number) => p.options[((voter * 7) % 11) % 4]!;
    const responses = await Promise.all(
      Array.from({ length: VOTERS }, (_, voter) => vote(voter, p.id, choice(voter))),
    );

    expect(responses.filter((r) => r.statusCode !== 200).map((r) => r.body)).toEqual([]);
    for (const r of responses) {
      const { results } = r.json();
      // Every answer counts at least the caller's own vote, and its percentages add up to 100.
      expect(results.total_votes).toBeGreaterThanOrEqual(1);
      expect(
        Math.round(
          results.options.reduce((s: number, o: { percentage: number }) => s + o.percentage, 0) * 10,
        ),
      ).toBe(1000);
    }
    const expected: Record<number, number> = {};
    for (let v = 0; v < VOTERS; v++) expected[choice(v)] = (expected[choice(v)] ?? 0) + 1;

    expect(await countsFromVotes(runtime, p.id)).toEqual(expected);
    await settled();
    expect(await storedTally(runtime, p.id)).toEqual(expected);
    const read = (await apps[0]!.inject(`/api/polls/${p.id}`)).json().data.poll;
    expect(read.results.total_votes).toBe(VOTERS);
    expect(read.tallied_at).not.toBeNull();
  });

  it('votes arriving in waves while tallies run, with changed votes, still settle exactly', async () => {
    const p = await poll(runtime, { texts: ['Yes', 'No', 'Maybe'], allowChange: true });
    const last = new Map<number, number>();
    const BASE = 100_000;
    // Each wave lands around the debounce delay, so tallies start while later waves are still voting.
    for (let wave = 0; wave < 8; wave++) {
      const batch = Array.from({ length: 150 }, (_, i) => {
        // Half the voters of a wave are new; the other half change the vote they cast in an earlier wave.
        const voter = BASE + (i % 2 === 0 || wave === 0 ? wave * 150 + i : (wave - 1) * 150 + i - 1);
        const option = p.options[(voter + wave) % 3]!;
        return { voter, option };
      });
      const responses = await Promise.all(batch.map(({ voter, option }) => vote(voter, p.id, option)));
      expect(responses.filter((r) => r.statusCode !== 200).map((r) => r.body)).toEqual([]);
      for (const { voter, option } of batch) last.set(voter, option);
      await new Promise((r) => setTimeout(r, 300 + wave * 60));
    }
    const expected: Record<number, number> = {};
    for (const option of last.values()) expected[option] = (expected[option] ?? 0) + 1;

    expect(await countsFromVotes(runtime, p.id)).toEqual(expected);
    await settled();
    expect(await storedTally(runtime, p.id)).toEqual(expected);
    const read = (await apps[1]!.inject(`/api/polls/${p.id}`)).json().data.poll;
    expect(read.results.total_votes).toBe(last.size);
  });

  it('tallies a poll once more after it closes, which records poll.closed once; tallies while open record none', async () => {
    const p = await poll(runtime, { texts: ['Ale', 'Lager'] });
    const votes = await Promise.all([1, 2, 3].map((v) => vote(900_000 + v, p.id, p.options[v % 2]!)));
    expect(votes.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    await settled();
    expect(await closedEvents(p.id)).toBe(0);
    // Closed now (as POST /polls/{id}/close does), after its last tally.
    await runtime.database.query(sql`UPDATE polls SET closed_at = now() WHERE id = ${p.id}`);
    // No vote asks for this tally: the workers' `close` job (every 15 s) finds the poll and recounts it.
    const final = await eventually(
      () => pollsRepository(runtime.database.db).find(p.id),
      (found) => found!.talliedAt !== null && found!.talliedAt >= found!.closedAt!,
      60_000,
    );
    expect(final!.options.reduce((sum, o) => sum + o.votes, 0)).toBe(3);
    expect(await closedEvents(p.id)).toBe(1);
    // A later recount of the closed poll is not a second closing.
    await pollsRepository(runtime.database.db).recount(p.id);
    expect(await closedEvents(p.id)).toBe(1);
  }, 90_000);
});

describe('the tally job', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('corrects a wrong stored count, and a duplicate delivery changes nothing', async () => {
    const p = await poll(runtime);
    await runtime.database.query(
      sql`INSERT INTO poll_votes (poll_id, option_id, voter) VALUES (${p.id}, ${p.options[0]}, 'client:a'), (${p.id}, ${p.options[0]}, 'client:b'), (${p.id}, ${p.options[2]}, 'client:c')`,
    );
    await runtime.database.query(sql`UPDATE poll_options SET votes = 99 WHERE id = ${p.options[1]}`);
    const polls = pollsRepository(runtime.database.db);
    expect(await polls.recount(p.id)).toEqual({ total: 3, changed: 3 });
    expect(await polls.recount(p.id)).toEqual({ total: 3, changed: 0 });
    expect(await storedTally(runtime, p.id)).toEqual({ [p.options[0]!]: 2, [p.options[2]!]: 1 });
  });

  it('concurrent recounts of one poll queue behind each other and agree', async () => {
    const p = await poll(runtime);
    const polls = pollsRepository(runtime.database.db);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        polls.cast({ pollId: p.id, optionId: p.options[i % 3]!, voter: `client:${i}`, allowChange: false }),
      ),
    );
    const results = await Promise.all(Array.from({ length: 10 }, () => polls.recount(p.id)));
    expect(results.map((r) => r?.total)).toEqual(Array(10).fill(40));
    expect(await storedTally(runtime, p.id)).toEqual(await countsFromVotes(runtime, p.id));
  });

  it('skips a poll that no longer exists', async () => {
    expect(await pollsRepository(runtime.database.db).recount(2_000_000_000)).toBeNull();
  });
});
