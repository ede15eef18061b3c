import { and, asc, desc, eq, gt, gte, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { digestSends, questions, subscribers } from '../schema/index.js';

type Frequency = 'daily' | 'weekly' | 'monthly';

export interface DigestQuestion {
  id: number;
  title: string;
  slug: string;
  votes: number;
  answersCount: number;
  tagNames: string[];
}

const questionFields = {
  id: questions.id,
  title: questions.title,
  slug: questions.slug,
  votes: questions.votes,
  answersCount: questions.answersCount,
  tagNames: questions.tagNames,
};

/** Subscribers and digest sends. State changes are single statements, so concurrent requests cannot interleave. */
export function newsletterRepository(db: Db) {
  return {
    /**
     * Records a subscribe request. A new, unsubscribed or bouncing address becomes `pending` with the asked
     * frequency; a confirmed subscriber is left as is (a new frequency takes effect when the emailed link is
     * followed), so nobody can change someone else's subscription by knowing the address.
     */
    async requestSubscription(email: string, frequency: Frequency): Promise<{ id: number; status: string }> {
      const confirmed = sql`${subscribers.status} = 'confirmed'`;
      const [row] = await db
        .insert(subscribers)
        .values({ email, frequency, status: 'pending' })
        .onConflictDoUpdate({
          target: subscribers.email,
          set: {
            frequency: sql`CASE WHEN ${confirmed} THEN ${subscribers.frequency} ELSE excluded.frequency END`,
            status: sql`CASE WHEN ${confirmed} THEN 'confirmed' ELSE 'pending' END`,
            bounceCount: sql`CASE WHEN ${confirmed} THEN ${subscribers.bounceCount} ELSE 0 END`,
            updatedAt: sql`now()`,
          },
        })
        .returning({ id: subscribers.id, status: subscribers.status });
      return row!;
    },

    /** pending|confirmed → confirmed with the token's frequency; null when the row no longer matches the link. */
    async confirm(id: number, email: string, frequency: Frequency): Promise<{ id: number } | null> {
      const [row] = await db
        .update(subscribers)
        .set({
          status: 'confirmed',
          frequency,
          confirmedAt: sql`CASE WHEN ${subscribers.status} = 'pending' THEN now() ELSE ${subscribers.confirmedAt} END`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(subscribers.id, id),
            eq(subscribers.email, email),
            inArray(subscribers.status, ['pending', 'confirmed']),
          ),
        )
        .returning({ id: subscribers.id });
      return row ?? null;
    },

    async unsubscribeByEmail(email: string): Promise<void> {
      await db
        .update(subscribers)
        .set({ status: 'unsubscribed', unsubscribedAt: sql`now()`, updatedAt: sql`now()` })
        .where(and(eq(subscribers.email, email), ne(subscribers.status, 'unsubscribed')));
    },

    async unsubscribeById(id: number, email: string): Promise<void> {
      await db
        .update(subscribers)
        .set({ status: 'unsubscribed', unsubscribedAt: sql`now()`, updatedAt: sql`now()` })
        .where(
          and(eq(subscribers.id, id), eq(subscribers.email, email), ne(subscribers.status, 'unsubscribed')),
        );
    },

    async find(id: number) {
      const [row] = await db.select().from(subscribers).where(eq(subscribers.id, id));
      return row ?? null;
    },

    /** Confirmed subscribers of a frequency after `afterId`, in id order (keyset pages over the due index). */
    async confirmedPage(frequency: Frequency, afterId: number, limit: number): Promise<number[]> {
      const rows = await db
        .select({ id: subscribers.id })
        .from(subscribers)
        .where(
          and(
            eq(subscribers.frequency, frequency),
            eq(subscribers.status, 'confirmed'),
            gt(subscribers.id, afterId),
          ),
        )
        .orderBy(asc(subscribers.id))
        .limit(limit);
      return rows.map((r) => r.id);
    },

    /** The period's best new questions: asked within it, not voted below zero, most votes then most answers. */
    bestQuestions(start: Date, end: Date, limit: number): Promise<DigestQuestion[]> {
      return db
        .select(questionFields)
        .from(questions)
        .where(and(gte(questions.createdAt, start), lt(questions.createdAt, end), gte(questions.votes, 0)))
        .orderBy(
          desc(questions.votes),
          desc(questions.answersCount),
          desc(questions.views),
          asc(questions.id),
        )
        .limit(limit);
    },

    /** The questions still present, in the order given. */
    async questionsByIds(ids: number[]): Promise<DigestQuestion[]> {
      if (ids.length === 0) return [];
      const rows = await db.select(questionFields).from(questions).where(inArray(questions.id, ids));
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.flatMap((id) => byId.get(id) ?? []);
    },

    /**
     * Claims the (subscriber, period) send before any SMTP traffic: the unique key lets exactly one claimant
     * through. Returns null when claimed, else the state of the existing row.
     */
    async claimSend(subscriberId: number, period: string): Promise<null | 'sending' | 'sent' | 'failed'> {
      const inserted = await db
        .insert(digestSends)
        .values({ subscriberId, period, status: 'sending' })
        .onConflictDoNothing({ target: [digestSends.subscriberId, digestSends.period] })
        .returning({ id: digestSends.id });
      if (inserted.length > 0) return null;
      const [existing] = await db
        .select({ status: digestSends.status })
        .from(digestSends)
        .where(and(eq(digestSends.subscriberId, subscriberId), eq(digestSends.period, period)));
      return existing?.status ?? 'sending';
    },

    /** The server accepted the message; a delivery also ends a run of bounces. */
    async markSent(subscriberId: number, period: string, messageId: string): Promise<void> {
      await db.transaction(async (tx) => {
        await tx
          .update(digestSends)
          .set({ status: 'sent', messageId, sentAt: sql`now()` })
          .where(and(eq(digestSends.subscriberId, subscriberId), eq(digestSends.period, period)));
        await tx
          .update(subscribers)
          .set({ bounceCount: 0 })
          .where(and(eq(subscribers.id, subscriberId), gt(subscribers.bounceCount, 0)));
      });
    },

    /** Gives the claim back after a failure known to have delivered nothing, so a retry may claim it again. */
    async releaseClaim(subscriberId: number, period: string): Promise<void> {
      await db
        .delete(digestSends)
        .where(
          and(
            eq(digestSends.subscriberId, subscriberId),
            eq(digestSends.period, period),
            eq(digestSends.status, 'sending'),
          ),
        );
    },

    /** A final failure: the row stays, so no retry or duplicate tries this period again. */
    async markFailed(subscriberId: number, period: string, error: string): Promise<void> {
      await db
        .update(digestSends)
        .set({ status: 'failed', error: error.slice(0, 1000) })
        .where(and(eq(digestSends.subscriberId, subscriberId), eq(digestSends.period, period)));
    },

    /** Counts a permanent rejection; at `limit` consecutive ones a confirmed subscriber becomes `bouncing`. */
    async recordBounce(
      subscriberId: number,
      limit: number,
    ): Promise<{ bounceCount: number; status: string } | null> {
      const [row] = await db
        .update(subscribers)
        .set({
          bounceCount: sql`${subscribers.bounceCount} + 1`,
          status: sql`CASE WHEN ${subscribers.bounceCount} + 1 >= ${limit} AND ${subscribers.status} = 'confirmed' THEN 'bouncing' ELSE ${subscribers.status} END`,
          updatedAt: sql`now()`,
        })
        .where(eq(subscribers.id, subscriberId))
        .returning({ bounceCount: subscribers.bounceCount, status: subscribers.status });
      return row ?? null;
    },
  };
}

export type NewsletterRepository = ReturnType<typeof newsletterRepository>;
