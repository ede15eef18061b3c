import { arrayLiteral } from '../db/bulk/array-literal.js';
import { BatchInserter } from '../db/bulk/insert.js';
import { SearchVectors } from '../db/bulk/search-vectors.js';
import type { BulkSession } from '../db/bulk/session.js';
import { makeUser } from './people.js';
import { Random } from './prng.js';
import { slugify } from './slug.js';
import { answerBody, commentText, questionBody, questionTitle } from './text.js';
import { TOPICS, type Topic } from './topics.js';

/**
 * Writes a demo dataset of `questions` questions through bulk inserts. Every value comes from one seeded PRNG
 * consumed in a fixed order and every date from a fixed calendar, so the same options give the same rows.
 * Ids are assigned here (the tables must be empty) so that references need no round trip; counters are
 * computed here too, so the final agora_recount() only has per-user, per-tag and per-category totals to fill.
 */
export interface DemoOptions {
  questions: number;
  seed?: number;
  batchSize?: number;
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

const END = Date.UTC(2025, 5, 1);
const SPAN = 2 * 365 * 86_400_000;
const START = END - SPAN;
const HOUR = 3_600_000;

/** How many users a dataset of n questions gets: enough distinct voters for the most voted post. */
export const usersFor = (questions: number) => Math.max(40, Math.ceil(questions / 4));

export async function generateDemo(session: BulkSession, options: DemoOptions): Promise<DemoCounts> {
  const seed = options.seed ?? 20_240_601;
  const random = new Random(seed);
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
  // Written into users.questions_count / answers_count, so that the final recount finds nothing to update.
  const questionsBy = new Int32Array(userCount + 1);
  const answersBy = new Int32Array(userCount + 1);
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

  const questions = ins('questions', [
    { name: 'id', type: I },
    { name: 'title', type: T },
    { name: 'slug', type: T },
    { name: 'content', type: T },
    { name: 'author_id', type: I },
    { name: 'category_id', type: I },
    { name: 'votes', type: I },
    { name: 'views', type: I },
    { name: 'answers_count', type: I },
    { name: 'has_accepted', type: 'bool' },
    { name: 'tag_names', type: 'text[]' },
    { name: 'created_at', type: D },
    { name: 'updated_at', type: D },
    { name: 'search_vector', type: 'tsvector' },
  ]);
  // With the question's sort keys (migration 0009), so that the load needs no per-row lookup to fill them.
  const questionTags = ins('question_tags', [
    { name: 'question_id', type: I },
    { name: 'tag_id', type: I },
    { name: 'created_at', type: D },
    { name: 'votes', type: I },
    { name: 'views', type: I },
    { name: 'answers_count', type: I },
  ]);
  const answers = ins('answers', [
    { name: 'id', type: I },
    { name: 'question_id', type: I },
    { name: 'author_id', type: I },
    { name: 'content', type: T },
    { name: 'votes', type: I },
    { name: 'is_accepted', type: 'bool' },
    { name: 'accepted_at', type: D },
    { name: 'created_at', type: D },
    { name: 'updated_at', type: D },
    { name: 'search_vector', type: 'tsvector' },
  ]);
  // Triggers are off during the load: the search vectors come with the rows (migration 0017).
  const vectors = new SearchVectors(session);
  const comments = ins('comments', [
    { name: 'id', type: I },
    { name: 'question_id', type: I },
    { name: 'answer_id', type: I },
    { name: 'author_id', type: I },
    { name: 'content', type: T },
    { name: 'votes', type: I },
    { name: 'created_at', type: D },
  ]);
  const votes = new BatchInserter(
    session,
    'votes',
    [
      { name: 'user_id', type: I },
      { name: 'question_id', type: I },
      { name: 'answer_id', type: I },
      { name: 'value', type: 'smallint' },
      { name: 'created_at', type: D },
    ],
    { batchSize: batchSize * 4 },
  );

  // Active users write most posts: an author is drawn with a bias towards low ids.
  const author = () => 1 + Math.floor(userCount * random.next() ** 2.2);
  const topicOf = () => TOPICS[Math.floor(TOPICS.length * random.next() ** 1.4)]!;
  // Only bare slugs are remembered: a suffixed one (`-<id>`) is unique by construction, and the number of distinct
  // titles is bounded by the vocabulary, so this set stops growing however many questions are seeded.
  const usedSlugs = new Set<string>();
  let answerId = 0;
  let commentId = 0;

  /** Vote rows for one post, by distinct users other than its author; returns the score they sum to. */
  const castVotes = async (
    target: { question?: number; answer?: number },
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
    const start = random.int(0, userCount - 1);
    let j = 0;
    for (let n = 0; n < up + down; n++, j++) {
      let voter = ((start + j) % userCount) + 1;
      if (voter === authorId) voter = ((start + ++j) % userCount) + 1;
      const when = new Date(created + HOUR * (1 + random.geometric(48)));
      await votes.add([voter, target.question ?? null, target.answer ?? null, n < up ? 1 : -1, when]);
    }
    return up - down;
  };

  const addComments = async (
    target: { question?: number; answer?: number },
    topic: Topic,
    created: number,
    mean: number,
  ) => {
    const n = random.geometric(mean);
    for (let k = 0; k < n; k++) {
      const when = new Date(created + HOUR * (1 + random.geometric(24)) + k * 60_000);
      await comments.add([
        ++commentId,
        target.question ?? null,
        target.answer ?? null,
        author(),
        commentText(random, topic),
        random.geometric(0.3),
        when,
      ]);
    }
  };

  for (let id = 1; id <= options.questions; id++) {
    const topic = topicOf();
    const categoryId = TOPICS.indexOf(topic) + 1;
    const created = START + Math.floor((SPAN * (id - 1)) / options.questions) + random.int(0, 59_000);
    const title = questionTitle(random, topic);
    const base = slugify(title) || 'question';
    const slug = usedSlugs.has(base) ? `${base}-${id}` : base;
    usedSlugs.add(base);
    const authorId = author();
    questionsBy[authorId]!++;
    const names = random.sample(
      topic.tags.map(([name]) => name),
      1 + Math.min(4, random.geometric(0.9)),
      1.5,
    );
    if (random.chance(0.05)) names.push(random.pick(random.pick(TOPICS).tags)[0]);
    const tagNames = [...new Set(names)].sort();
    const content = questionBody(random, topic);
    const hot = random.chance(0.05);

    const answerCount = random.chance(0.2) ? 0 : Math.min(30, 1 + random.geometric(hot ? 4 : 1));
    const answerRows: Array<{ id: number; author: number; created: number; content: string }> = [];
    for (let k = 0; k < answerCount; k++) {
      const answerAuthor = author();
      answersBy[answerAuthor]!++;
      answerRows.push({
        id: ++answerId,
        author: answerAuthor,
        created: created + HOUR * (1 + random.geometric(20)),
        content: answerBody(random, topic),
      });
    }
    const accepted = answerCount > 0 && random.chance(0.55) ? random.int(0, answerCount - 1) : -1;
    const score = await castVotes({ question: id }, authorId, created, hot);
    const views = 10 + random.geometric(60) + Math.max(0, score) * 25 + answerCount * 15;
    const updated = random.chance(0.2) ? created + HOUR * random.int(1, 500) : created;
    await questions.add([
      id,
      title,
      slug,
      content,
      authorId,
      categoryId,
      score,
      views,
      answerCount,
      accepted >= 0,
      arrayLiteral(tagNames),
      new Date(created),
      new Date(updated),
      await vectors.question(title, tagNames, content),
    ]);
    for (const name of tagNames)
      await questionTags.add([id, tagIds.get(name)!, new Date(created), score, views, answerCount]);
    await addComments({ question: id }, topic, created, 0.8);

    for (const [k, a] of answerRows.entries()) {
      const answerScore = await castVotes({ answer: a.id }, a.author, a.created, hot || k === accepted);
      await answers.add([
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
      await addComments({ answer: a.id }, topic, a.created, 0.5);
    }
  }
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
      questionsBy[i]!,
      answersBy[i]!,
      joined,
    ]);
  }
  await users.flush();

  // Foreign-key checks are triggers, off during the load: batches may land in any order inside the transaction.
  for (const batch of [questions, questionTags, answers, comments, votes]) await batch.flush();

  return {
    users: userCount,
    categories: TOPICS.length,
    tags: tagIds.size,
    questions: options.questions,
    answers: answerId,
    comments: commentId,
    votes: votes.written,
  };
}
