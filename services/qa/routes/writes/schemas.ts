import { Type } from '@fastify/type-provider-typebox';
import { Id } from '../../schemas.js';

/** Request and response shapes of the write routes; created posts come back in the read shapes of ../../schemas.ts. */

const strict = { additionalProperties: false } as const;

// Lengths are checked by the domain (shared/qa/validation.ts) after trimming, with messages that say the rule;
// the schema only bounds the size so that an absurd body is refused before any work.
const Text = (description: string) => Type.String({ maxLength: 100_000, description });

export const QuestionKey = Type.Object({ id: Type.String({ description: 'Question id or slug' }) });
export const AnswerKey = Type.Object({ id: Type.String({ description: 'Answer id' }) });

const Category = Type.Union([Type.Null(), Id()], { description: 'Category id (null: none)' });
const Tags = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: '1 to 5 tag names' });

export const NewQuestion = Type.Object(
  {
    title: Text('15 to 150 characters'),
    content: Text('30 to 30,000 characters'),
    tags: Tags,
    category: Type.Optional(Category),
  },
  strict,
);

export const QuestionEdit = Type.Object(
  {
    title: Type.Optional(Text('15 to 150 characters')),
    content: Type.Optional(Text('30 to 30,000 characters')),
    tags: Type.Optional(Tags),
    category: Type.Optional(Category),
  },
  strict,
);

export const PostText = Type.Object({ content: Text('30 to 30,000 characters') }, strict);
export const CommentText = Type.Object({ content: Text('15 to 600 characters') }, strict);

export const VoteBody = Type.Object(
  {
    value: Type.Union([Type.Literal(1), Type.Literal(-1), Type.Literal(0)], {
      description: '1 up, -1 down, 0 removes the vote',
    }),
  },
  strict,
);

export const VoteResult = Type.Object({
  id: Type.Integer({ description: 'The post voted on' }),
  votes: Type.Integer({ description: "The post's score after this vote" }),
  user_vote: Type.Integer({ description: "The caller's standing vote: 1, -1 or 0" }),
});

export const AcceptResult = Type.Object({
  question_id: Type.Integer(),
  answer_id: Type.Integer(),
  is_accepted: Type.Boolean(),
  has_accepted: Type.Boolean(),
});
