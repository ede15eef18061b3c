import type { AnswerView, answersRepository } from '../db/repositories/answers.js';
import type { CommentView, commentsRepository } from '../db/repositories/comments.js';

export interface QuestionIncludes {
  answers?: (AnswerView & { comments?: CommentView[] })[];
  comments?: CommentView[];
}

/**
 * What `?include=answers,comments` adds to a question's detail: its answers (accepted first, then by votes),
 * its own comments, and with both asked for, each answer's comments. Parts not asked for are absent.
 */
export async function questionIncludes(
  questionId: number,
  include: ReadonlySet<string>,
  repos: { answers: ReturnType<typeof answersRepository>; comments: ReturnType<typeof commentsRepository> },
): Promise<QuestionIncludes> {
  const [answerList, questionComments] = await Promise.all([
    include.has('answers') ? repos.answers.listForQuestion(questionId, 'votes') : undefined,
    include.has('comments') ? repos.comments.forQuestion(questionId) : undefined,
  ]);
  let withComments: QuestionIncludes['answers'] = answerList;
  if (answerList && include.has('comments')) {
    const byAnswer = await repos.comments.forAnswers(answerList.map((a) => a.id));
    withComments = answerList.map((a) => ({ ...a, comments: byAnswer.get(a.id) ?? [] }));
  }
  return {
    ...(withComments ? { answers: withComments } : {}),
    ...(questionComments ? { comments: questionComments } : {}),
  };
}
