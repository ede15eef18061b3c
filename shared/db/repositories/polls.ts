import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { pollOptions, polls, pollVotes, questions } from '../schema/index.js';
import { rows } from './rows.js';

export interface PollRecord {
  id: number;
  title: string;
  questionId: number | null;
  authorId: number | null;
  allowChange: boolean;
  closedAt: Date | null;
  talliedAt: Date | null;
  createdAt: Date;
  /** In display order; `votes` is the tally the polls worker last stored. */
  options: { id: number; text: string; votes: number }[];
}

/** 'refused' is a second vote on a poll that does not allow changing it. */
export type CastOutcome = 'inserted' | 'updated' | 'refused';

const run = rows;

export function pollsRepository(db: Db) {
  return {
    /** The poll and its options in one round trip: the vote path reads it on every vote. */
    async find(id: number): Promise<PollRecord | undefined> {
      const rows = await db
        .select({
          id: polls.id,
          title: polls.title,
          questionId: polls.questionId,
          authorId: polls.authorId,
          allowChange: polls.allowChange,
          closedAt: polls.closedAt,
          talliedAt: polls.talliedAt,
          createdAt: polls.createdAt,
          optionId: pollOptions.id,
          optionText: pollOptions.text,
          optionVotes: pollOptions.votes,
        })
        .from(polls)
        .leftJoin(pollOptions, eq(pollOptions.pollId, polls.id))
        .where(eq(polls.id, id))
        .orderBy(asc(pollOptions.position), asc(pollOptions.id));
      const [first] = rows;
      if (!first) return undefined;
      const { optionId: _id, optionText: _text, optionVotes: _votes, ...poll } = first;
      const options = rows.flatMap((r) =>
        r.optionId === null ? [] : [{ id: r.optionId, text: r.optionText!, votes: r.optionVotes! }],
      );
      return { ...poll, options };
    },

    /** The poll an option belongs to, to tell "no such option" (404) from "not this poll's option" (400). */
    async pollOfOption(optionId: number): Promise<number | undefined> {
      const [row] = await db
        .select({ pollId: pollOptions.pollId })
        .from(pollOptions)
        .where(eq(pollOptions.id, optionId));
      return row?.pollId;
    },

    async questionAuthor(questionId: number): Promise<number | undefined> {
      const [row] = await db
        .select({ authorId: questions.authorId })
        .from(questions)
        .where(eq(questions.id, questionId));
      return row?.authorId;
    },

    async create(poll: {
      title: string;
      options: string[];
      questionId?: number | null;
      authorId?: number | null;
      allowChange: boolean;
      closesAt?: Date | null;
    }): Promise<number> {
      return db.transaction(async (tx) => {
        const [created] = await tx
          .insert(polls)
          .values({
            title: poll.title,
            questionId: poll.questionId ?? null,
            authorId: poll.authorId ?? null,
            allowChange: poll.allowChange,
            closedAt: poll.closesAt ?? null,
          })
          .returning({ id: polls.id });
        await tx
          .insert(pollOptions)
          .values(poll.options.map((text, position) => ({ pollId: created!.id, text, position })));
        return created!.id;
      });
    },

    /** Closes the poll now, unless it is closed already (an earlier deadline stays). */
    async close(id: number): Promise<void> {
      await db
        .update(polls)
        .set({ closedAt: sql`now()` })
        .where(and(eq(polls.id, id), sql`(${polls.closedAt} IS NULL OR ${polls.closedAt} > now())`));
    },

    /**
     * One row per voter and poll (the unique index decides, so concurrent votes of one voter cannot both land).
     * A repeat vote moves the row to the new option only when the poll allows changes.
     */
    async cast(vote: {
      pollId: number;
      optionId: number;
      voter: string;
      allowChange: boolean;
    }): Promise<CastOutcome> {
      const onConflict = vote.allowChange
        ? sql`ON CONFLICT (poll_id, voter) DO UPDATE SET option_id = EXCLUDED.option_id, updated_at = now()`
        : sql`ON CONFLICT (poll_id, voter) DO NOTHING`;
      const rows = await run<{ inserted: boolean }>(
        db,
        sql`INSERT INTO poll_votes (poll_id, option_id, voter) VALUES (${vote.pollId}, ${vote.optionId}, ${vote.voter})
            ${onConflict} RETURNING (xmax = 0) AS inserted`,
      );
      if (rows.length === 0) return 'refused';
      return rows[0]!.inserted ? 'inserted' : 'updated';
    },

    async voteOf(pollId: number, voter: string): Promise<number | null> {
      const [row] = await db
        .select({ optionId: pollVotes.optionId })
        .from(pollVotes)
        .where(and(eq(pollVotes.pollId, pollId), eq(pollVotes.voter, voter)));
      return row?.optionId ?? null;
    },

    /**
     * Counts straight from the votes: exact at this instant, including a vote committed a moment ago. By option
     * id, so PostgreSQL can answer from the poll_votes_option_idx index alone.
     */
    async countVotes(optionIds: readonly number[]): Promise<Map<number, number>> {
      if (optionIds.length === 0) return new Map();
      const ids = sql.join(
        optionIds.map((id) => sql`${id}`),
        sql`, `,
      );
      const rows = await run<{ option_id: number; n: number }>(
        db,
        sql`SELECT option_id, count(*)::int AS n FROM poll_votes WHERE option_id IN (${ids}) GROUP BY option_id`,
      );
      return new Map(rows.map((r) => [Number(r.option_id), Number(r.n)]));
    },

    /** Polls whose closing time has passed since their last tally (or that were never tallied), oldest first. */
    async closedSinceTally(limit: number): Promise<number[]> {
      const rows = await run<{ id: number }>(
        db,
        sql`SELECT id FROM polls
            WHERE closed_at <= now() AND (tallied_at IS NULL OR tallied_at < closed_at)
            ORDER BY closed_at, id LIMIT ${limit}`,
      );
      return rows.map((r) => Number(r.id));
    },

    /**
     * Recounts every option from the votes and stores the counts (the polls worker's tally). The poll row is
     * locked FOR NO KEY UPDATE first, which serialises tallies of one poll, and the count is a statement that
     * starts after the lock is held, so a tally can never overwrite a newer count with an older one. Voters only
     * take FOR KEY SHARE on the poll (the foreign key check), which that lock does not block.
     */
    async recount(pollId: number): Promise<{ total: number; changed: number } | null> {
      return db.transaction(async (tx) => {
        const locked = await run(tx, sql`SELECT id FROM polls WHERE id = ${pollId} FOR NO KEY UPDATE`);
        if (locked.length === 0) return null;
        const changed = await run<{ votes: number }>(
          tx,
          sql`UPDATE poll_options o SET votes = c.n
              FROM (SELECT po.id, count(v.id)::int AS n
                      FROM poll_options po LEFT JOIN poll_votes v ON v.option_id = po.id AND v.poll_id = po.poll_id
                     WHERE po.poll_id = ${pollId} GROUP BY po.id) c
              WHERE o.id = c.id AND o.votes IS DISTINCT FROM c.n
              RETURNING o.votes`,
        );
        await run(tx, sql`UPDATE polls SET tallied_at = now() WHERE id = ${pollId}`);
        const [total] = await run<{ n: number }>(
          tx,
          sql`SELECT coalesce(sum(votes), 0)::int AS n FROM poll_options WHERE poll_id = ${pollId}`,
        );
        return { total: Number(total?.n ?? 0), changed: changed.length };
      });
    },
  };
}

export type PollsRepository = ReturnType<typeof pollsRepository>;
