import { inArray, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import type { RetrievedPost } from '../../ai/index.js';
import { tags } from '../schema/index.js';
import { anyOf, createTermRarity, lexemesOf, termMatches } from './word-lookup.js';

/**
 * What the AI engine reads from PostgreSQL: duplicate candidates for quality_check, posts for chat, and the tagged
 * questions the suggest_tags index is built from. All lookups go through the GIN-indexed `search_vector` columns
 * (migration 0002).
 */

export interface SimilarQuestionRow {
  id: number;
  title: string;
  similarity: number;
}

/** What chat retrieval returns: the engine's own shape. */
export type RetrievedPostRow = RetrievedPost;

export interface TaggedQuestion {
  id: number;
  title: string;
  body: string;
  tags: { name: string; slug: string }[];
}

/** Words a text is looked up by, its rarest (word-lookup.ts): more than related questions use, for recall. */
const QUERY_TERMS = 32;
/** Duplicate candidates are re-scored by trigram similarity; the full-text rank only has to put them in the top. */
const SIMILAR_CANDIDATES = 50;
const SIMILAR_RESULTS = 5;
/** Posts handed to the chat ranker; it keeps at most 5. */
const RETRIEVED_POSTS = 20;
/** The ranker reads whole sentences; a few thousand characters of a post are plenty and bound the work. */
const EXCERPT_CHARS = 3000;
/** Bodies longer than the engine accepts would be truncated by it anyway. */
const INDEXED_BODY_CHARS = 20_000;

const parseJson = <T>(value: unknown): T =>
  typeof value === 'string' ? (JSON.parse(value) as T) : (value as T);

export function aiRetrievalRepository(database: Pick<Database, 'db' | 'query'>) {
  const rarity = createTermRarity((statement) => database.query(statement));
  return {
    /**
     * Questions whose title resembles `text` (a title, or the start of a body), with pg_trgm `similarity` of the titles
     * as the score in [0, 1] (1 = the same trigrams). Candidates come from the full-text index, best 50 first.
     */
    async findSimilarQuestions(text: string): Promise<SimilarQuestionRow[]> {
      const [found] = await database.query<{ lexemes: string[] }>(
        sql`SELECT ${lexemesOf(sql`${text}::text`)} AS lexemes`,
      );
      const terms = await rarity.rarest(found?.lexemes ?? [], 'questions', QUERY_TERMS);
      if (terms.length === 0) return [];
      const rows = await database.query<{ id: number; title: string; similarity: number }>(sql`
        SELECT c.id, c.title, similarity(c.title, ${text})::float8 AS similarity
        FROM (
          SELECT q.id, q.title FROM questions q
          WHERE q.id = ANY(${termMatches('questions', terms)})
          ORDER BY ts_rank(q.search_vector, ${anyOf(terms)}::tsquery) DESC, q.id DESC
          LIMIT ${SIMILAR_CANDIDATES}
        ) c
        ORDER BY similarity DESC, c.id DESC
        LIMIT ${SIMILAR_RESULTS}`);
      return rows.map((r) => ({
        id: Number(r.id),
        title: r.title,
        similarity: Math.max(0, Math.min(1, Number(r.similarity))),
      }));
    },

    /**
     * Posts that may answer `message`, best first: questions matching it, answers matching it, and the accepted or
     * best-voted answers of the matching questions (an answer rarely repeats the question's words). An answer scores
     * its own rank plus half its question's, plus a little when accepted; the engine re-ranks by sentences.
     */
    async retrieve(message: string): Promise<RetrievedPostRow[]> {
      const [text] = await database.query<{ lexemes: string[] }>(
        sql`SELECT ${lexemesOf(sql`${message}::text`)} AS lexemes`,
      );
      const lexemes = text?.lexemes ?? [];
      const [questions, answers] = await Promise.all([
        rarity.rarest(lexemes, 'questions', QUERY_TERMS),
        rarity.rarest(lexemes, 'answers', QUERY_TERMS),
      ]);
      const found = { questions, answers };
      if (found.questions.length === 0) return [];
      const inQuestions = sql`${anyOf(found.questions)}::tsquery`;
      const inAnswers = sql`${anyOf(found.answers)}::tsquery`;
      const rows = await database.query<{
        question_id: number;
        answer_id: number | null;
        title: string;
        excerpt: string;
        votes: number;
        is_accepted: boolean;
      }>(sql`
        WITH matched_questions AS (
          SELECT q.id, ts_rank(q.search_vector, ${inQuestions}) AS rank FROM questions q
          WHERE q.id = ANY(${termMatches('questions', found.questions)})
          ORDER BY rank DESC, q.id DESC LIMIT 10
        ),
        matched_answers AS (
          SELECT a.id FROM answers a
          WHERE a.id = ANY(${termMatches('answers', found.answers)})
          ORDER BY ts_rank(a.search_vector, ${inAnswers}) DESC, a.id DESC LIMIT 10
        ),
        best_answers AS (
          SELECT b.id FROM matched_questions mq
          CROSS JOIN LATERAL (
            SELECT a.id FROM answers a WHERE a.question_id = mq.id
            ORDER BY a.is_accepted DESC, a.votes DESC, a.id LIMIT 2
          ) b
        ),
        candidate_answers AS (SELECT id FROM matched_answers UNION SELECT id FROM best_answers)
        SELECT * FROM (
          SELECT a.question_id, a.id AS answer_id, q.title, left(a.content, ${EXCERPT_CHARS}) AS excerpt, a.votes, a.is_accepted,
            ts_rank(a.search_vector, ${inAnswers}) + 0.5 * ts_rank(q.search_vector, ${inQuestions})
              + CASE WHEN a.is_accepted THEN 0.02 ELSE 0 END AS score
          FROM candidate_answers c JOIN answers a ON a.id = c.id JOIN questions q ON q.id = a.question_id
          UNION ALL
          SELECT q.id, NULL, q.title, left(q.content, ${EXCERPT_CHARS}), q.votes, false, mq.rank
          FROM matched_questions mq JOIN questions q ON q.id = mq.id
        ) posts
        ORDER BY score DESC, question_id DESC, answer_id NULLS FIRST
        LIMIT ${RETRIEVED_POSTS}`);
      return rows.map((r) => ({
        questionId: Number(r.question_id),
        ...(r.answer_id === null ? {} : { answerId: Number(r.answer_id) }),
        title: r.title,
        excerpt: r.excerpt,
        votes: Number(r.votes),
        isAccepted: Boolean(r.is_accepted),
      }));
    },

    /**
     * Every tagged question, in id order, `batchSize` at a time (keyset pagination: no long transaction, no OFFSET),
     * with each tag's name and slug as stored. Feeds buildTagIndex.
     */
    async *taggedQuestions(batchSize = 500): AsyncGenerator<TaggedQuestion> {
      let after = 0;
      for (;;) {
        const rows = await database.query<{ id: number; title: string; body: string; tags: unknown }>(sql`
          SELECT q.id, q.title, left(q.content, ${INDEXED_BODY_CHARS}) AS body,
            (SELECT json_agg(json_build_object('name', t.name, 'slug', t.slug) ORDER BY t.name)
             FROM question_tags qt JOIN tags t ON t.id = qt.tag_id WHERE qt.question_id = q.id) AS tags
          FROM questions q
          WHERE q.id > ${after} AND EXISTS (SELECT 1 FROM question_tags qt WHERE qt.question_id = q.id)
          ORDER BY q.id
          LIMIT ${batchSize}`);
        for (const row of rows) {
          yield {
            id: Number(row.id),
            title: row.title,
            body: row.body,
            tags: parseJson<TaggedQuestion['tags']>(row.tags) ?? [],
          };
        }
        if (rows.length < batchSize) return;
        after = Number(rows[rows.length - 1]!.id);
      }
    },

    /** The tags among `slugs` that exist now (a tag deleted since the index was built must not be suggested). */
    async existingTags(slugs: readonly string[]): Promise<Map<string, { name: string; slug: string }>> {
      if (slugs.length === 0) return new Map();
      const rows = await database.db
        .select({ name: tags.name, slug: tags.slug })
        .from(tags)
        .where(inArray(tags.slug, [...slugs]));
      return new Map(rows.map((r) => [r.slug, r]));
    },
  };
}

export type AiRetrievalRepository = ReturnType<typeof aiRetrievalRepository>;
