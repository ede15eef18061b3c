/**
 * Latency of each read repository query, run in this process against a seeded database (no HTTP): what the read
 * endpoints cost in PostgreSQL. Bounded: `ITERATIONS` sequential runs per case after a warm-up.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/qa-read-queries.ts [iterations]
 */
import { openDatabase } from '../shared/db/client.js';
import { answersRepository } from '../shared/db/repositories/answers.js';
import { questionsRepository } from '../shared/db/repositories/questions.js';
import { searchService } from '../shared/qa/search.js';
import { tagsRepository } from '../shared/db/repositories/tags.js';
import { userProfilesRepository } from '../shared/db/repositories/user-profiles.js';
import { sql } from 'drizzle-orm';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to a seeded database');
const iterations = Math.min(Number(process.argv[2] ?? 200), 5000);

const database = await openDatabase({ databaseUrl: url, dataDir: '' });
const db = database.db;
const questions = questionsRepository(db);
const answers = answersRepository(db);
const tags = tagsRepository(db);
const users = userProfilesRepository(db);
const search = searchService(db);

const [popular] = await database.query<{ slug: string; n: number }>(
  sql`SELECT slug, questions_count AS n FROM tags ORDER BY questions_count DESC LIMIT 1`,
);
const [rare] = await database.query<{ slug: string; n: number }>(
  sql`SELECT slug, questions_count AS n FROM tags WHERE questions_count > 0 ORDER BY questions_count ASC LIMIT 1`,
);
const [{ count }] = (await database.query<{ count: number }>(
  sql`SELECT count(*)::int AS count FROM questions`,
)) as [{ count: number }];
const p = { page: 1, limit: 20 };

const cases: [string, () => Promise<unknown>][] = [
  ['questions newest p1', () => questions.list({ ...p, sort: 'newest' })],
  ['questions newest p500', () => questions.list({ page: 500, limit: 20, sort: 'newest' })],
  ['questions votes p1', () => questions.list({ ...p, sort: 'votes' })],
  ['questions votes p500', () => questions.list({ page: 500, limit: 20, sort: 'votes' })],
  ['questions views p1', () => questions.list({ ...p, sort: 'views' })],
  ['questions unanswered p1', () => questions.list({ ...p, sort: 'unanswered' })],
  ['questions unanswered p500', () => questions.list({ page: 500, limit: 20, sort: 'unanswered' })],
  ['questions limit 100', () => questions.list({ page: 1, limit: 100, sort: 'newest' })],
  [
    `questions tag=${popular!.slug} (${popular!.n})`,
    () => questions.list({ ...p, sort: 'newest', tag: popular!.slug }),
  ],
  [
    `questions tag popular votes p50`,
    () => questions.list({ page: 50, limit: 20, sort: 'votes', tag: popular!.slug }),
  ],
  [
    `questions tag=${rare!.slug} (${rare!.n})`,
    () => questions.list({ ...p, sort: 'newest', tag: rare!.slug }),
  ],
  ['questions category=3', () => questions.list({ ...p, sort: 'newest', category: 3 })],
  [
    'questions category=3 votes p100',
    () => questions.list({ page: 100, limit: 20, sort: 'votes', category: 3 }),
  ],
  ['questions tag+category', () => questions.list({ ...p, sort: 'newest', tag: popular!.slug, category: 3 })],
  ['question by id', () => questions.find(String(1 + Math.floor(Math.random() * count)))],
  ['question by slug', () => questions.find(`q-${1 + Math.floor(Math.random() * count)}`)],
  ['answers of a question', () => answers.listForQuestion(1 + Math.floor(Math.random() * count), 'votes')],
  ['users reputation p1', () => users.list({ ...p, sort: 'reputation' })],
  ['users name p200', () => users.list({ page: 200, limit: 20, sort: 'name' })],
  ['tags popular p1', () => tags.list({ ...p, sort: 'popular' })],
  ['search all "fermentation"', () => search.search({ ...p, q: 'fermentation', type: 'all' })],
  ['search questions "dry hopping"', () => search.search({ ...p, q: '"dry hopping"', type: 'questions' })],
  [
    'search all "yeast starter -lager"',
    () => search.search({ ...p, q: 'yeast starter -lager', type: 'all' }),
  ],
  [
    'search questions rare "refractometer gelatin"',
    () => search.search({ ...p, q: 'refractometer gelatin', type: 'questions' }),
  ],
  ['search users "user42"', () => search.search({ ...p, q: 'user42', type: 'users' })],
  ['search all page 5', () => search.search({ page: 5, limit: 20, q: 'yeast', type: 'all' })],
];

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
console.log(`| case | p50 ms | p99 ms | max ms |\n|---|---|---|---|`);
for (const [name, run] of cases) {
  for (let i = 0; i < 5; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(
    `| ${name} | ${pct(times, 0.5).toFixed(1)} | ${pct(times, 0.99).toFixed(1)} | ${times.at(-1)!.toFixed(1)} |`,
  );
}
await database.close();
