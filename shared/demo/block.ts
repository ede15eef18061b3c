import { arrayLiteral, type Cell } from '../db/bulk/array-literal.js';
import { copyRow } from '../db/bulk/copy-text.js';
import type { Column } from '../db/bulk/insert.js';
import type { SearchVectors } from '../db/bulk/search-vectors.js';
import { Random } from './prng.js';
import { slugify } from './slug.js';
import { answerBody, commentText, questionBody, questionTitle } from './text.js';
import { TOPICS, type Topic } from './topics.js';

/**
 * The demo's questions, with their tags, answers, comments and votes, generated in blocks of BLOCK_QUESTIONS
 * question ids. A block is a pure function of the seed, the dataset's size and its number: it draws from PRNG streams
 * of its own, so blocks can be generated in any order and on any thread (generate-worker.ts) and still give the
 * same rows. Answer and comment ids run on from block to block: a block's first ids come from blockCounts() of the
 * blocks before it, which replays only their shape stream (how many answers and comments each question gets).
 */
export const BLOCK_QUESTIONS = 2000;

const END = Date.UTC(2025, 5, 1);
const SPAN = 2 * 365 * 86_400_000;
export const START = END - SPAN;
const HOUR = 3_600_000;

export interface DemoContext {
  seed: number;
  questions: number;
  users: number;
  /** Questions per block: BLOCK_QUESTIONS, or fewer in tests. */
  block: number;
}

/** The first answer and comment ids of a block. */
export interface BlockStart {
  answer: number;
  comment: number;
}

/** Posts per author, summed over the blocks a generator wrote: users.questions_count / answers_count. */
export interface Tally {
  questionsBy: Int32Array;
  answersBy: Int32Array;
}

export const newTally = (users: number): Tally => ({
  questionsBy: new Int32Array(users + 1),
  answersBy: new Int32Array(users + 1),
});

export type BlockTable = 'question_tags' | 'answers' | 'comments' | 'votes';

/** Where a block's rows go: COPY text on a worker (TextSink), rows for INSERTs on the embedded database (RowSink). */
export interface BlockSink {
  /** A question row without its slug, which depends on earlier blocks: the bare slug goes to its first user. */
  question(base: string, cells: readonly Cell[]): void;
  row(table: BlockTable, cells: readonly Cell[]): void;
}

const I = 'int' as const;
const T = 'text' as const;
const D = 'timestamptz' as const;

/** Questions' columns, the slug first: the generator writes the rest, the loader the slug (see BlockSink). */
export const QUESTION_COLUMNS: Column[] = [
  { name: 'slug', type: T },
  { name: 'id', type: I },
  { name: 'title', type: T },
  { name: 'content', type: T },
  { name: 'author_id', type: I },
  { name: 'category_id', type: I },
  { name: 'votes', type: I },
  { name: 'views', type: I },
  { name: 'answers_count', type: I },
  { name: 'has_accepted', type: 'bool' },
  { name: 'accepted_answer_id', type: I },
  { name: 'accepted_at', type: D },
  { name: 'tag_names', type: 'text[]' },
  { name: 'created_at', type: D },
  { name: 'updated_at', type: D },
  { name: 'search_vector', type: 'tsvector' },
];

export const BLOCK_COLUMNS: Record<BlockTable, Column[]> = {
  // With the question's sort keys (migration 0009), so that the load needs no per-row lookup to fill them.
  question_tags: [
    { name: 'question_id', type: I },
    { name: 'tag_id', type: I },
    { name: 'created_at', type: D },
    { name: 'votes', type: I },
    { name: 'views', type: I },
    { name: 'answers_count', type: I },
  ],
  answers: [
    { name: 'id', type: I },
    { name: 'question_id', type: I },
    { name: 'author_id', type: I },
    { name: 'content', type: T },
    { name: 'votes', type: I },
    { name: 'is_accepted', type: 'bool' },
    { name: 'accepted_at', type: D },
    { name: 'created_at', type: D },
    { name: 'updated_at', type: D },
    // Triggers are off during the load: the search vectors come with the rows (migration 0017).
    { name: 'search_vector', type: 'tsvector' },
  ],
  comments: [
    { name: 'id', type: I },
    { name: 'question_id', type: I },
    { name: 'answer_id', type: I },
    { name: 'author_id', type: I },
    { name: 'content', type: T },
    { name: 'votes', type: I },
    { name: 'created_at', type: D },
  ],
  votes: [
    { name: 'user_id', type: I },
    { name: 'question_id', type: I },
    { name: 'answer_id', type: I },
    { name: 'value', type: 'smallint' },
    { name: 'created_at', type: D },
  ],
};

/** Tag ids in the order the tags are written: the first topic naming a tag owns it. */
export function tagIds(): Map<string, number> {
  const ids = new Map<string, number>();
  for (const topic of TOPICS)
    for (const [name] of topic.tags) if (!ids.has(name)) ids.set(name, ids.size + 1);
  return ids;
}

/** Stream 0 (content) or 1 (shape) of a block, seeded through a 32-bit mix of seed, block and stream. */
function blockRandom(seed: number, block: number, stream: number): Random {
  let h = (seed ^ Math.imul(block + 1, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return new Random((h ^ (h >>> 16)) >>> 0);
}

interface Shape {
  hot: boolean;
  answers: number;
  comments: number;
  answerComments: number[];
}

/** One question's shape, drawn from its block's shape stream: the only draws blockCounts() has to replay. */
function shapeOf(random: Random): Shape {
  const hot = random.chance(0.05);
  const answers = random.chance(0.2) ? 0 : Math.min(30, 1 + random.geometric(hot ? 4 : 1));
  const comments = random.geometric(0.8);
  const answerComments = Array.from({ length: answers }, () => random.geometric(0.5));
  return { hot, answers, comments, answerComments };
}

/** The first and last question ids of a block. */
export const blockIds = (ctx: DemoContext, block: number) => ({
  first: block * ctx.block + 1,
  last: Math.min(ctx.questions, (block + 1) * ctx.block),
});

/** The first answer and comment ids of every block. */
export function blockStarts(ctx: DemoContext): BlockStart[] {
  const starts: BlockStart[] = [];
  const next = { answer: 1, comment: 1 };
  for (let block = 0; block * ctx.block < ctx.questions; block++) {
    starts.push({ ...next });
    const shapes = blockRandom(ctx.seed, block, 1);
    const { first, last } = blockIds(ctx, block);
    for (let id = first; id <= last; id++) {
      const shape = shapeOf(shapes);
      next.answer += shape.answers;
      next.comment += shape.comments + shape.answerComments.reduce((a, b) => a + b, 0);
    }
  }
  return starts;
}

/**
 * Generates one block into `sink`, adding its authors' posts to `tally`; returns how many rows of each table it
 * wrote. `vectors` computes the search vectors (the rows are written with triggers off).
 */
export async function generateBlock(
  ctx: DemoContext,
  block: number,
  start: BlockStart,
  vectors: SearchVectors,
  sink: BlockSink,
  tally: Tally,
): Promise<void> {
  const random = blockRandom(ctx.seed, block, 0);
  const shapes = blockRandom(ctx.seed, block, 1);
  const tags = tagIds();
  const userCount = ctx.users;
  let answerId = start.answer - 1;
  let commentId = start.comment - 1;

  // Active users write most posts: an author is drawn with a bias towards low ids.
  const author = () => 1 + Math.floor(userCount * random.next() ** 2.2);
  const topicOf = () => TOPICS[Math.floor(TOPICS.length * random.next() ** 1.4)]!;

  /** Vote rows for one post, by distinct users other than its author; returns the score they sum to. */
  const castVotes = (
    question: number | null,
    answer: number | null,
    authorId: number,
    created: number,
    hot: boolean,
  ) => {
    let score = random.geometric(hot ? 3 : 1.2);
    if (random.chance(0.08)) score = -1 - random.geometric(0.5);
    if (hot && random.chance(0.02)) score += random.int(20, 120);
    let down = (score < 0 ? -score : 0) + random.geometric(0.25);
    let up = score + down;
    const room = userCount - 1;
    if (up + down > room) {
      up = Math.min(up, room);
      down = Math.min(down, room - up);
    }
    const first = random.int(0, userCount - 1);
    let j = 0;
    for (let n = 0; n < up + down; n++, j++) {
      let voter = ((first + j) % userCount) + 1;
      if (voter === authorId) voter = ((first + ++j) % userCount) + 1;
      const when = new Date(created + HOUR * (1 + random.geometric(48)));
      sink.row('votes', [voter, question, answer, n < up ? 1 : -1, when]);
    }
    return up - down;
  };

  const addComments = (
    question: number | null,
    answer: number | null,
    topic: Topic,
    created: number,
    n: number,
  ) => {
    for (let k = 0; k < n; k++) {
      const when = new Date(created + HOUR * (1 + random.geometric(24)) + k * 60_000);
      sink.row('comments', [
        ++commentId,
        question,
        answer,
        author(),
        commentText(random, topic),
        random.geometric(0.3),
        when,
      ]);
    }
  };

  const { first, last } = blockIds(ctx, block);
  for (let id = first; id <= last; id++) {
    const shape = shapeOf(shapes);
    const topic = topicOf();
    const categoryId = TOPICS.indexOf(topic) + 1;
    const created = START + Math.floor((SPAN * (id - 1)) / ctx.questions) + random.int(0, 59_000);
    const title = questionTitle(random, topic);
    const authorId = author();
    tally.questionsBy[authorId]!++;
    const names = random.sample(
      topic.tags.map(([name]) => name),
      1 + Math.min(4, random.geometric(0.9)),
      1.5,
    );
    if (random.chance(0.05)) names.push(random.pick(random.pick(TOPICS).tags)[0]);
    const tagNames = [...new Set(names)].sort();
    const content = questionBody(random, topic);

    const answerRows: Array<{ id: number; author: number; created: number; content: string }> = [];
    for (let k = 0; k < shape.answers; k++) {
      const answerAuthor = author();
      tally.answersBy[answerAuthor]!++;
      answerRows.push({
        id: ++answerId,
        author: answerAuthor,
        created: created + HOUR * (1 + random.geometric(20)),
        content: answerBody(random, topic),
      });
    }
    const accepted = shape.answers > 0 && random.chance(0.55) ? random.int(0, shape.answers - 1) : -1;
    const acceptedRow = answerRows[accepted];
    const score = castVotes(id, null, authorId, created, shape.hot);
    const views = 10 + random.geometric(60) + Math.max(0, score) * 25 + shape.answers * 15;
    const updated = random.chance(0.2) ? created + HOUR * random.int(1, 500) : created;
    sink.question(slugify(title) || 'question', [
      id,
      title,
      content,
      authorId,
      categoryId,
      score,
      views,
      shape.answers,
      acceptedRow !== undefined,
      acceptedRow?.id ?? null,
      acceptedRow ? new Date(acceptedRow.created) : null,
      arrayLiteral(tagNames),
      new Date(created),
      new Date(updated),
      await vectors.question(title, tagNames, content),
    ]);
    for (const name of tagNames)
      sink.row('question_tags', [id, tags.get(name)!, new Date(created), score, views, shape.answers]);
    addComments(id, null, topic, created, shape.comments);

    for (const [k, a] of answerRows.entries()) {
      const answerScore = castVotes(null, a.id, a.author, a.created, shape.hot || k === accepted);
      sink.row('answers', [
        a.id,
        id,
        a.author,
        a.content,
        answerScore,
        k === accepted,
        k === accepted ? new Date(a.created) : null,
        new Date(a.created),
        new Date(a.created),
        await vectors.answer(a.content),
      ]);
      addComments(null, a.id, topic, a.created, shape.answerComments[k]!);
    }
  }
}

/** A block as COPY text, per table; questions as slug bases and the rest of their rows (from the tab before `id`). */
export interface BlockText {
  bases: string[];
  questionRows: string[];
  text: Record<BlockTable, string>;
  rows: Record<BlockTable, number>;
}

export class TextSink implements BlockSink {
  readonly out: BlockText = {
    bases: [],
    questionRows: [],
    text: { question_tags: '', answers: '', comments: '', votes: '' },
    rows: { question_tags: 0, answers: 0, comments: 0, votes: 0 },
  };

  question(base: string, cells: readonly Cell[]): void {
    this.out.bases.push(base);
    this.out.questionRows.push(`\t${copyRow(cells)}`);
  }

  row(table: BlockTable, cells: readonly Cell[]): void {
    this.out.text[table] += copyRow(cells);
    this.out.rows[table]++;
  }
}

/** A block as rows, for the INSERT path. */
export class RowSink implements BlockSink {
  readonly questions: Array<[base: string, cells: readonly Cell[]]> = [];
  readonly rows: Record<BlockTable, Array<readonly Cell[]>> = {
    question_tags: [],
    answers: [],
    comments: [],
    votes: [],
  };

  question(base: string, cells: readonly Cell[]): void {
    this.questions.push([base, cells]);
  }

  row(table: BlockTable, cells: readonly Cell[]): void {
    this.rows[table].push(cells);
  }
}
