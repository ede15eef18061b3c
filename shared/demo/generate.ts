import os from 'node:os';
import { BatchInserter } from '../db/bulk/insert.js';
import { SearchVectors } from '../db/bulk/search-vectors.js';
import type { BulkSession } from '../db/bulk/session.js';
import {
  BLOCK_COLUMNS,
  BLOCK_QUESTIONS,
  blockIds,
  blockStarts,
  generateBlock,
  newTally,
  QUESTION_COLUMNS,
  RowSink,
  START,
  type BlockStart,
  type BlockTable,
  type BlockText,
  type DemoContext,
  type Tally,
} from './block.js';
import { makeUser } from './people.js';
import { Random } from './prng.js';
import { slugify } from './slug.js';
import { TOPICS } from './topics.js';
import { GeneratorWorker } from './workers.js';

/**
 * Writes a demo dataset of `questions` questions through bulk inserts. Every value comes from seeded PRNG streams
 * (one per block of questions, block.ts, and one for the users) and every date from a fixed calendar, so the same
 * options give the same rows, whichever thread generated them. Ids are assigned here (the tables must be empty) so
 * that references need no round trip; counters are computed here too, so the final agora_recount() only has
 * per-user, per-tag and per-category totals to fill.
 */
export interface DemoOptions {
  questions: number;
  seed?: number;
  batchSize?: number;
  /** Questions per block (block.ts); the default, BLOCK_QUESTIONS, is part of what the seed's rows depend on. */
  blockQuestions?: number;
}

export interface DemoCounts {
  users: number;
  categories: number;
  tags: number;
  questions: number;
  answers: number;
  comments: number;
  votes: number;
}

type SlugOf = (base: string, id: number) => string;
type Loaded = { tally: Tally; rows: Record<BlockTable, number> };

/** How many users a dataset of n questions gets: enough distinct voters for the most voted post. */
export const usersFor = (questions: number) => Math.max(40, Math.ceil(questions / 4));

export async function generateDemo(session: BulkSession, options: DemoOptions): Promise<DemoCounts> {
  const seed = options.seed ?? 20_240_601;
  const batchSize = options.batchSize ?? 2000;
  const ins = (table: string, cols: ConstructorParameters<typeof BatchInserter>[2]) =>
    new BatchInserter(session, table, cols, { batchSize });
  const I = 'int' as const;
  const T = 'text' as const;
  const D = 'timestamptz' as const;

  const categories = ins('categories', [
    { name: 'id', type: I },
    { name: 'name', type: T },
    { name: 'slug', type: T },
    { name: 'description', type: T },
    { name: 'icon', type: T },
    { name: 'created_at', type: D },
  ]);
  const tags = ins('tags', [
    { name: 'id', type: I },
    { name: 'name', type: T },
    { name: 'slug', type: T },
    { name: 'description', type: T },
    { name: 'created_at', type: D },
  ]);
  const userCount = usersFor(options.questions);
  const tagIds = new Map<string, number>();
  for (const [k, topic] of TOPICS.entries()) {
    await categories.add([
      k + 1,
      topic.name,
      topic.slug,
      topic.description,
      topic.icon,
      new Date(START - 86_400_000),
    ]);
    for (const [name, description] of topic.tags) {
      if (tagIds.has(name)) continue;
      tagIds.set(name, tagIds.size + 1);
      await tags.add([
        tagIds.size,
        name,
        slugify(name),
        description,
        new Date(START - 86_400_000 + tagIds.size * 60_000),
      ]);
    }
  }
  await categories.flush();
  await tags.flush();

  const ctx: DemoContext = {
    seed,
    questions: options.questions,
    users: userCount,
    block: options.blockQuestions ?? BLOCK_QUESTIONS,
  };
  const starts = blockStarts(ctx);
  // Only bare slugs are remembered: a suffixed one (`-<id>`) is unique by construction, and the number of distinct
  // titles is bounded by the vocabulary, so this set stops growing however many questions are seeded. Given in
  // question order, block after block, so the first question of a title gets the bare slug.
  const usedSlugs = new Set<string>();
  const slugOf = (base: string, id: number) => {
    const slug = usedSlugs.has(base) ? `${base}-${id}` : base;
    usedSlugs.add(base);
    return slug;
  };
  const { tally, rows } = session.copy
    ? await loadOnWorkers(session, ctx, starts, slugOf)
    : await loadHere(session, ctx, starts, slugOf, batchSize);

  // Users last, with their post counts (known only now), from a PRNG stream of their own.
  const people = new Random((seed ^ 0x9e3779b9) >>> 0);
  const users = ins('users', [
    { name: 'id', type: I },
    { name: 'username', type: T },
    { name: 'display_name', type: T },
    { name: 'avatar', type: T },
    { name: 'bio', type: T },
    { name: 'reputation', type: I },
    { name: 'badge_gold', type: I },
    { name: 'badge_silver', type: I },
    { name: 'badge_bronze', type: I },
    { name: 'questions_count', type: I },
    { name: 'answers_count', type: I },
    { name: 'created_at', type: D },
  ]);
  for (let i = 1; i <= userCount; i++) {
    const u = makeUser(people, i, TOPICS);
    const joined = new Date(START - people.int(0, 3 * 365) * 86_400_000 - people.int(0, 86_399) * 1000);
    await users.add([
      i,
      u.username,
      u.displayName,
      u.avatar,
      u.bio,
      u.reputation,
      u.gold,
      u.silver,
      u.bronze,
      tally.questionsBy[i]!,
      tally.answersBy[i]!,
      joined,
    ]);
  }
  await users.flush();

  return {
    users: userCount,
    categories: TOPICS.length,
    tags: tagIds.size,
    questions: options.questions,
    answers: rows.answers,
    comments: rows.comments,
    votes: rows.votes,
  };
}

const TABLES = Object.keys(BLOCK_COLUMNS) as BlockTable[];
const names = (columns: readonly { name: string }[]) => columns.map((c) => c.name);

/**
 * The COPY path: blocks generated on one thread per core, written here in block order (the slugs depend on it)
 * by COPY on the transaction's connection. A thread is one block ahead at most, so memory stays flat.
 */
async function loadOnWorkers(
  session: BulkSession,
  ctx: DemoContext,
  starts: BlockStart[],
  slugOf: SlugOf,
): Promise<Loaded> {
  const workers = Array.from(
    { length: Math.min(os.availableParallelism(), starts.length) },
    () => new GeneratorWorker(session, ctx),
  );
  const rows = { question_tags: 0, answers: 0, comments: 0, votes: 0 };
  const pending: Array<Promise<BlockText> | undefined> = [];
  let asked = 0;
  let written: Promise<unknown> = Promise.resolve();
  try {
    for (let block = 0; block < starts.length; block++) {
      for (; asked < Math.min(starts.length, block + workers.length + 1); asked++) {
        const out = workers[asked % workers.length]!.block(asked, starts[asked]!);
        out.catch(() => {}); // awaited below, in order
        pending[asked] = out;
      }
      const out = await pending[block]!;
      pending[block] = undefined;
      await written;
      written = writeBlock(session, ctx, block, out, slugOf, rows);
    }
    await written;
    const tallies = await Promise.all(workers.map((w) => w.tally()));
    const tally = newTally(ctx.users);
    for (const t of tallies) {
      for (let i = 0; i <= ctx.users; i++) {
        tally.questionsBy[i]! += t.questionsBy[i]!;
        tally.answersBy[i]! += t.answersBy[i]!;
      }
    }
    return { tally, rows };
  } finally {
    await written.catch(() => {});
    await Promise.all(workers.map((w) => w.close()));
  }
}

/** Sends a block's COPYs; resolves when PostgreSQL has them all. */
async function writeBlock(
  session: BulkSession,
  ctx: DemoContext,
  block: number,
  out: BlockText,
  slugOf: SlugOf,
  rows: Record<BlockTable, number>,
): Promise<void> {
  const { first } = blockIds(ctx, block);
  let questions = '';
  for (let i = 0; i < out.bases.length; i++)
    questions += slugOf(out.bases[i]!, first + i) + out.questionRows[i]!;
  const sent = [
    session.copy!('questions', names(QUESTION_COLUMNS), questions).then(() =>
      session.progress?.add('questions', out.bases.length),
    ),
    ...TABLES.map((table) =>
      session.copy!(table, names(BLOCK_COLUMNS[table]), out.text[table]).then(() => {
        rows[table] += out.rows[table];
        session.progress?.add(table, out.rows[table]);
      }),
    ),
  ];
  // Every COPY settled before a failure goes up: the rollback must not overtake a COPY still on the connection.
  const failed = (await Promise.allSettled(sent)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The embedded database's path (no COPY): blocks generated here, one after the other, and inserted. */
async function loadHere(
  session: BulkSession,
  ctx: DemoContext,
  starts: BlockStart[],
  slugOf: SlugOf,
  batchSize = 2000,
): Promise<Loaded> {
  const vectors = new SearchVectors(session);
  const tally = newTally(ctx.users);
  const questions = new BatchInserter(session, 'questions', QUESTION_COLUMNS, { batchSize });
  const inserters = Object.fromEntries(
    TABLES.map((t) => [t, new BatchInserter(session, t, BLOCK_COLUMNS[t], { batchSize })]),
  ) as Record<BlockTable, BatchInserter>;
  for (const [block, start] of starts.entries()) {
    const sink = new RowSink();
    await generateBlock(ctx, block, start, vectors, sink, tally);
    for (const [base, cells] of sink.questions)
      await questions.add([slugOf(base, cells[0] as number), ...cells]);
    for (const table of TABLES) for (const cells of sink.rows[table]) await inserters[table].add(cells);
  }
  await questions.flush();
  for (const table of TABLES) await inserters[table].flush();
  return {
    tally,
    rows: Object.fromEntries(TABLES.map((t) => [t, inserters[t].written])) as Record<BlockTable, number>,
  };
}
