import type { Scope } from '../access/keys.js';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { postLinksRepository } from '../db/repositories/post-links.js';
import { postWritesRepository } from '../db/repositories/post-writes.js';
import { reputationRepository } from '../db/repositories/reputation.js';
import { votesRepository } from '../db/repositories/votes.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { acceptEffect, mergeDeltas, voteChange, type PostKind, type VoteValue } from './reputation.js';
import { firstFreeSlug, slugify, tagSlug } from './slug.js';
import { renderComment, renderPost } from './content.js';
import { questionLinkPattern } from './links.js';
import { checkComment, checkContent, checkTitle, normaliseTags } from './validation.js';

/**
 * The write side of the Q&A domain. Every operation is one transaction that locks what it reads before deciding
 * (see post-writes.ts for the lock order), so concurrent writers never lose an update; a deadlock or
 * serialisation failure that PostgreSQL breaks is retried.
 */

export interface Actor {
  userId: number;
  scopes: Scope[];
}

export interface QuestionInput {
  title: string;
  content: string;
  tags: string[];
  category?: number | null;
}

export type QuestionChanges = Partial<QuestionInput>;

type Repos = {
  posts: ReturnType<typeof postWritesRepository>;
  votes: ReturnType<typeof votesRepository>;
  reputation: ReturnType<typeof reputationRepository>;
  links: ReturnType<typeof postLinksRepository>;
};

const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 4;
const SLUG_ATTEMPTS = 5;

function pgCode(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  ) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

export function qaWrites(db: Db, config: Pick<Config, 'qa' | 'publicUrl'>) {
  // Links in post bodies to our questions are kept in post_links (GET /questions/{id}/linked).
  const linkPattern = questionLinkPattern(config.publicUrl);

  async function transaction<T>(fn: (repos: Repos) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction(async (tx) => {
          const txDb = tx as unknown as Db;
          return fn({
            posts: postWritesRepository(txDb),
            votes: votesRepository(txDb),
            reputation: reputationRepository(txDb),
            links: postLinksRepository(txDb),
          });
        });
      } catch (err) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(pgCode(err) ?? '')) throw err;
      }
    }
  }

  /** Tag ids for the names, in order, creating missing tags when the actor may. */
  async function resolveTags(repos: Repos, actor: Actor, names: string[]): Promise<number[]> {
    const existing = await repos.posts.tagsByName(names);
    const missing = names.filter((n) => !existing.some((t) => t.name === n));
    if (missing.length > 0) {
      const reputation = (await repos.reputation.of(actor.userId)) ?? 0;
      const threshold = config.qa.newTagMinReputation;
      if (!actor.scopes.includes('admin') && reputation < threshold) {
        const list = missing.map((n) => `"${n}"`).join(', ');
        throw new ValidationError(
          `Unknown tag ${list}: creating a tag needs ${threshold} reputation (you have ${reputation})`,
        );
      }
      const wanted = missing.map((name) => ({ name, slug: tagSlug(name) }));
      const clashes = await repos.posts.tagSlugsTaken(wanted.map((t) => t.slug));
      const clash = wanted.find((w) => clashes.some((c) => c.slug === w.slug && c.name !== w.name));
      if (clash) {
        const other = clashes.find((c) => c.slug === clash.slug)!;
        throw new ValidationError(
          `Tag "${clash.name}" is too close to the existing tag "${other.name}"; use that one`,
        );
      }
      await repos.posts.createTags(wanted);
    }
    const all = await repos.posts.tagsByName(names);
    return names.map((n) => all.find((t) => t.name === n)!.id);
  }

  async function checkCategory(repos: Repos, category: number | null | undefined): Promise<void> {
    if (category === undefined || category === null) return;
    if (!(await repos.posts.categoryExists(category)))
      throw new ValidationError(`Unknown category ${category}`);
  }

  async function lockOwnQuestion(repos: Repos, actor: Actor, questionId: number) {
    const question = await repos.posts.lockQuestion(questionId);
    if (!question) throw new NotFoundError('Question not found');
    if (question.authorId !== actor.userId)
      throw new ForbiddenError('Only the author can edit this question');
    return question;
  }

  return {
    async askQuestion(actor: Actor, input: QuestionInput): Promise<number> {
      const title = checkTitle(input.title);
      const content = renderPost(checkContent(input.content));
      const tags = normaliseTags(input.tags);
      return transaction(async (repos) => {
        await checkCategory(repos, input.category);
        // One user's posts are serialised so two identical submissions cannot both pass the duplicate check.
        await repos.posts.lockAuthorPosting(actor.userId);
        if (await repos.posts.recentTitleExists(actor.userId, title, config.qa.duplicateTitleSeconds)) {
          throw new ValidationError(
            `You asked a question with this title less than ${config.qa.duplicateTitleSeconds} seconds ago`,
          );
        }
        const tagIds = await resolveTags(repos, actor, tags);
        const base = slugify(title);
        for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt++) {
          const slug = firstFreeSlug(base, await repos.posts.slugsLike(base));
          const id = await repos.posts.insertQuestion({
            title,
            slug,
            content,
            authorId: actor.userId,
            categoryId: input.category ?? null,
          });
          if (id === undefined) continue; // another author took this slug a moment ago
          await repos.posts.setQuestionTags(id, tagIds);
          await repos.links.refreshBodyLinks(id, linkPattern);
          return id;
        }
        throw new Error(`no free slug for "${base}" after ${SLUG_ATTEMPTS} attempts`);
      });
    },

    /** Edits the given fields; the slug stays as it was made, so links keep working. */
    async editQuestion(actor: Actor, questionId: number, changes: QuestionChanges): Promise<void> {
      if (Object.values(changes).every((v) => v === undefined)) {
        throw new ValidationError('Nothing to change: give title, content, tags or category');
      }
      await transaction(async (repos) => {
        await lockOwnQuestion(repos, actor, questionId);
        const title = changes.title === undefined ? undefined : checkTitle(changes.title);
        const content = changes.content === undefined ? undefined : renderPost(checkContent(changes.content));
        const tags = changes.tags === undefined ? undefined : normaliseTags(changes.tags);
        await checkCategory(repos, changes.category);
        if (tags) await repos.posts.setQuestionTags(questionId, await resolveTags(repos, actor, tags));
        await repos.posts.updateQuestion(questionId, { title, content, categoryId: changes.category });
        if (content) await repos.links.refreshBodyLinks(questionId, linkPattern);
      });
    },

    async answer(actor: Actor, questionId: number, text: string): Promise<number> {
      const content = renderPost(checkContent(text));
      return transaction(async (repos) => {
        if (!(await repos.posts.lockQuestion(questionId))) throw new NotFoundError('Question not found');
        const id = await repos.posts.insertAnswer({ questionId, authorId: actor.userId, content });
        await repos.links.refreshBodyLinks(questionId, linkPattern);
        return id;
      });
    },

    async editAnswer(actor: Actor, answerId: number, text: string): Promise<void> {
      await transaction(async (repos) => {
        const answer = await repos.posts.lockAnswer(answerId);
        if (!answer) throw new NotFoundError('Answer not found');
        if (answer.authorId !== actor.userId)
          throw new ForbiddenError('Only the author can edit this answer');
        await repos.posts.updateAnswer(answerId, renderPost(checkContent(text)));
        await repos.links.refreshBodyLinks(answer.questionId, linkPattern);
      });
    },

    async comment(actor: Actor, target: { kind: PostKind; id: number }, text: string): Promise<number> {
      const content = renderComment(checkComment(text));
      return transaction(async (repos) => {
        if (target.kind === 'question') {
          if (!(await repos.posts.lockQuestion(target.id))) throw new NotFoundError('Question not found');
          return repos.posts.insertComment({ questionId: target.id, authorId: actor.userId, content });
        }
        if (!(await repos.posts.findAnswer(target.id))) throw new NotFoundError('Answer not found');
        return repos.posts.insertComment({ answerId: target.id, authorId: actor.userId, content });
      });
    },

    /** Sets the actor's vote on a post to 1, -1 or 0 (none); returns the post's new score and the vote. */
    async vote(actor: Actor, kind: PostKind, postId: number, value: VoteValue) {
      return transaction(async (repos) => {
        // An answer's vote moves its author's score in the question's tags (migration 0018), whose trigger locks the
        // question: taken first here, in the lock order of every write (post-writes.ts).
        if (kind === 'answer') {
          const found = await repos.posts.findAnswer(postId);
          if (found) await repos.posts.lockQuestion(found.questionId);
        }
        const post =
          kind === 'question' ? await repos.posts.lockQuestion(postId) : await repos.posts.lockAnswer(postId);
        if (!post) throw new NotFoundError(kind === 'question' ? 'Question not found' : 'Answer not found');
        if (post.authorId === actor.userId) throw new ForbiddenError('You cannot vote on your own post');
        const before = await repos.votes.current(kind, postId, actor.userId);
        if (before !== value) {
          await repos.votes.set(kind, postId, actor.userId, value);
          const change = voteChange(kind, before, value);
          await repos.reputation.apply(
            mergeDeltas([
              [post.authorId, change.author],
              [actor.userId, change.voter],
            ]),
          );
        }
        return { id: postId, votes: await repos.votes.score(kind, postId), user_vote: value };
      });
    },

    /** Accepts (or un-accepts) an answer; only the question's author may, and one answer at most is accepted. */
    async accept(actor: Actor, answerId: number, accepted: boolean) {
      return transaction(async (repos) => {
        const found = await repos.posts.findAnswer(answerId);
        if (!found) throw new NotFoundError('Answer not found');
        const question = await repos.posts.lockQuestion(found.questionId);
        if (!question) throw new NotFoundError('Question not found');
        if (question.authorId !== actor.userId)
          throw new ForbiddenError("Only the question's author can accept an answer");
        const answer = (await repos.posts.lockAnswer(answerId))!;
        if (answer.isAccepted !== accepted) {
          const deltas: Array<Map<number, number>> = [];
          if (accepted) {
            const previous = await repos.posts.lockAcceptedAnswer(question.id);
            if (previous) {
              await repos.posts.setAccepted(previous.id, false);
              deltas.push(negate(acceptEffect(previous.authorId, question.authorId)));
            }
            await repos.posts.setAccepted(answerId, true);
            deltas.push(acceptEffect(answer.authorId, question.authorId));
          } else {
            await repos.posts.setAccepted(answerId, false);
            deltas.push(negate(acceptEffect(answer.authorId, question.authorId)));
          }
          await repos.reputation.apply(mergeDeltas(...deltas));
        }
        const state = await repos.posts.questionState(question.id);
        return {
          question_id: question.id,
          answer_id: answerId,
          is_accepted: accepted,
          has_accepted: state!.has_accepted,
        };
      });
    },
  };
}

const negate = (deltas: Map<number, number>) => new Map([...deltas].map(([user, delta]) => [user, -delta]));

export type QaWrites = ReturnType<typeof qaWrites>;
