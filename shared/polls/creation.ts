import type { Db } from '../db/client.js';
import { pollsRepository, type PollRecord } from '../db/repositories/polls.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { normalisePoll, type NewPoll } from './rules.js';

/** Who creates the poll: a key's user (the API), or the operator (the admin CLI, null) who may attach anywhere. */
export type PollCreator = { userId: number; admin: boolean } | null;

export async function createPoll(db: Db, input: NewPoll, creator: PollCreator): Promise<PollRecord> {
  const poll = normalisePoll(input);
  const polls = pollsRepository(db);
  if (poll.closesAt && poll.closesAt.getTime() <= Date.now())
    throw new ValidationError('closes_at must be in the future');
  if (poll.questionId != null) {
    const author = await polls.questionAuthor(poll.questionId);
    if (author === undefined) throw new NotFoundError(`Question ${poll.questionId} not found`);
    // A poll shows under the question, so only the one who asked (or an admin) may put it there.
    if (creator && !creator.admin && creator.userId !== author) {
      throw new ForbiddenError("Only the question's author can attach a poll to it");
    }
  }
  const id = await polls.create({ ...poll, authorId: creator?.userId ?? poll.authorId ?? null });
  return (await polls.find(id))!;
}

/** Closes a poll now: its author or an admin. */
export async function closePoll(
  db: Db,
  pollId: number,
  creator: NonNullable<PollCreator>,
): Promise<PollRecord> {
  const polls = pollsRepository(db);
  const poll = await polls.find(pollId);
  if (!poll) throw new NotFoundError(`Poll ${pollId} not found`);
  if (!creator.admin && poll.authorId !== creator.userId)
    throw new ForbiddenError('Only the poll’s author can close it');
  await polls.close(pollId);
  return (await polls.find(pollId))!;
}
