import type { Db } from '../client.js';
import { JsonText } from '../json-text.js';
import { preparedRows } from '../prepared.js';

/**
 * Questions, answers and comments rendered as the API's JSON by PostgreSQL, in one prepared statement per read.
 *
 * The texts must be the bytes the response schemas' serialiser (fast-json-stringify) would write for the schemas of
 * services/qa/schemas.ts (Question, Answer, Comment, QuestionDetail): no spaces, and the members in its order, which
 * is the schema's required properties in their order, then its optional ones (content_markdown, answers, comments)
 * in theirs. json_build_object writes spaces, but
 * json_strip_nulls writes its result compactly, and it drops exactly the members that the API leaves out when null:
 * `content_markdown` (posts imported as HTML have none) and the includes not asked for. Strings are escaped as
 * JSON.stringify escapes them (PostgreSQL text holds no NUL and no lone surrogate).
 */

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The members of a Question, from `q` and its author `u`. */
const QUESTION = `'id', q.id, 'title', q.title, 'slug', q.slug, 'content', q.content, 'votes', q.votes, 'views', q.views, 'answers_count', q.answers_count,
  'has_accepted', q.has_accepted, 'author', json_build_object('id', u.id, 'username', u.username, 'avatar', u.avatar),
  'tags', q.tag_names, 'created_at', ${iso('q.created_at')}, 'content_markdown', q.content_markdown`;

/** A Comment, from `c` and its author `cu`. */
const COMMENT = `json_build_object('id', c.id, 'content', c.content, 'votes', c.votes,
  'author', json_build_object('id', cu.id, 'username', cu.username), 'created_at', ${iso('c.created_at')},
  'content_markdown', c.content_markdown)`;

/** Comments oldest first (as a conversation reads) where `condition`; `[]` when there are none. */
const comments = (condition: string) =>
  `(SELECT coalesce(json_agg(${COMMENT} ORDER BY c.created_at ASC, c.id ASC), '[]')
    FROM comments c JOIN users cu ON cu.id = c.author_id WHERE ${condition})`;

/** The members of a Question but content_markdown, as the columns of a row, from `q` and its author `u`. */
const QUESTION_COLUMNS = `q.id, q.title, q.slug, q.content, q.votes, q.views, q.answers_count, q.has_accepted,
  (SELECT row_to_json(a) FROM (SELECT u.id, u.username, u.avatar) a) AS author, q.tag_names AS tags,
  ${iso('q.created_at')} AS created_at`;

/**
 * A Question as JSON text, from `q` and its author `u`: the list pages' rendering. row_to_json writes compactly
 * (members named by the columns, in their order), so no json_strip_nulls is needed to take the spaces out, and that
 * pass (which parses the whole object, body included, again) was about a third of the page's execution; the one
 * member left out when null is left out by choosing the row.
 */
const QUESTION_JSON = `(CASE WHEN q.content_markdown IS NULL
    THEN (SELECT row_to_json(r) FROM (SELECT ${QUESTION_COLUMNS}) r)
    ELSE (SELECT row_to_json(r) FROM (SELECT ${QUESTION_COLUMNS}, q.content_markdown) r) END)::text`;

// $1 the question ids, in the order wanted; unknown ids are left out.
const PAGE_SQL = `SELECT coalesce('[' || string_agg(${QUESTION_JSON}, ','
    ORDER BY page.n) || ']', '[]') AS json
  FROM unnest($1::int[]) WITH ORDINALITY AS page(id, n)
  JOIN questions q ON q.id = page.id JOIN users u ON u.id = q.author_id`;

// $1 the id (null for a slug), $2 the key as given, $3 include answers, $4 include comments. The answers come
// accepted first, then by votes, then oldest first (GET /questions/{id}/answers' default).
const DETAIL_SQL = `SELECT q.id, json_strip_nulls(json_build_object(${QUESTION},
    'answers', CASE WHEN $3::bool THEN (
      SELECT coalesce(json_agg(json_build_object('id', a.id, 'content', a.content, 'votes', a.votes,
               'is_accepted', a.is_accepted, 'author', json_build_object('id', au.id, 'username', au.username),
               'created_at', ${iso('a.created_at')}, 'content_markdown', a.content_markdown,
               'comments', CASE WHEN $4::bool THEN ${comments('c.answer_id = a.id')} END)
             ORDER BY a.is_accepted DESC, a.votes DESC, a.created_at ASC, a.id ASC), '[]')
      FROM answers a JOIN users au ON au.id = a.author_id WHERE a.question_id = q.id) END,
    'comments', CASE WHEN $4::bool THEN ${comments('c.question_id = q.id')} END))::text AS json
  FROM questions q JOIN users u ON u.id = q.author_id
  WHERE q.id = $1::int OR q.slug = $2::text
  ORDER BY (q.id = $1::int) DESC NULLS LAST LIMIT 1`;

export function questionJsonRepository(db: Db) {
  return {
    /** A JSON array of the questions of the given ids, in that order. */
    async page(ids: number[]): Promise<JsonText> {
      if (ids.length === 0) return new JsonText('[]');
      const [row] = await preparedRows<{ json: string }>(db, PAGE_SQL, [`{${ids.join(',')}}`], {
        plans: 'reusable',
      });
      return new JsonText(row?.json ?? '[]');
    },

    /**
     * A question's detail (QuestionDetail) by id (`id`, in int4) or by slug (`key`), with its answers and comments
     * when asked for; undefined when no question has that id or slug.
     */
    async detail(
      id: number | null,
      key: string,
      include: { answers: boolean; comments: boolean },
    ): Promise<{ id: number; json: JsonText } | undefined> {
      const [row] = await preparedRows<{ id: number; json: string }>(
        db,
        DETAIL_SQL,
        [id, key, include.answers, include.comments],
        { plans: 'reusable' },
      );
      return row ? { id: row.id, json: new JsonText(row.json) } : undefined;
    },
  };
}
