/**
 * Reputation as Stack Exchange awards it (https://stackoverflow.com/help/whats-reputation), for the events this
 * API has. Each vote or acceptance moves points once; changing or removing it moves exactly the difference, so
 * reputation always equals 1 + the sum of the current votes and acceptances (the recount in the tests).
 *
 * | event                              | post author | voter / accepter |
 * |------------------------------------|-------------|------------------|
 * | question upvoted                   | +10         |  0               |
 * | answer upvoted                     | +10         |  0               |
 * | question downvoted                 |  −2         |  0               |
 * | answer downvoted                   |  −2         |  −1              |
 * | answer accepted (not one's own)    | +15         | +2               |
 *
 * Not applied: the 200-a-day cap and the floor at 1. Both make reputation depend on the order of events, so an
 * undone vote could not give back exactly what it took, and counters would drift from any recount.
 */

export type PostKind = 'question' | 'answer';
export type VoteValue = -1 | 0 | 1;

export const REPUTATION = {
  questionUpvote: 10,
  answerUpvote: 10,
  questionDownvote: -2,
  answerDownvote: -2,
  answerDownvoteVoter: -1,
  acceptedAnswer: 15,
  acceptedAnswerAccepter: 2,
} as const;

export interface Effect {
  author: number;
  voter: number;
}

/** What one standing vote is worth to the post's author and to the voter. */
export function voteEffect(kind: PostKind, value: VoteValue): Effect {
  if (value === 1)
    return { author: kind === 'question' ? REPUTATION.questionUpvote : REPUTATION.answerUpvote, voter: 0 };
  if (value === -1) {
    return kind === 'question'
      ? { author: REPUTATION.questionDownvote, voter: 0 }
      : { author: REPUTATION.answerDownvote, voter: REPUTATION.answerDownvoteVoter };
  }
  return { author: 0, voter: 0 };
}

/** The change when a user's vote on a post goes from `before` to `after` (0 = no vote). */
export function voteChange(kind: PostKind, before: VoteValue, after: VoteValue): Effect {
  const a = voteEffect(kind, after);
  const b = voteEffect(kind, before);
  return { author: a.author - b.author, voter: a.voter - b.voter };
}

/** What a standing acceptance is worth; accepting one's own answer earns nothing, as on Stack Exchange. */
export function acceptEffect(answerAuthorId: number, questionAuthorId: number): Map<number, number> {
  if (answerAuthorId === questionAuthorId) return new Map();
  return new Map([
    [answerAuthorId, REPUTATION.acceptedAnswer],
    [questionAuthorId, REPUTATION.acceptedAnswerAccepter],
  ]);
}

/** Adds per-user deltas together (a user may be on both sides of a change). */
export function mergeDeltas(
  ...parts: Array<Map<number, number> | Array<[number, number]>>
): Map<number, number> {
  const total = new Map<number, number>();
  for (const part of parts) for (const [user, delta] of part) total.set(user, (total.get(user) ?? 0) + delta);
  return total;
}
