import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

export const AI_ACTIONS = ['spam_check', 'quality_check', 'suggest_tags', 'chat'] as const;

export const aiQueue = defineQueue({
  name: 'ai',
  jobs: {
    run: {
      action: Type.Union(AI_ACTIONS.map((a) => Type.Literal(a))),
      content: Type.String(),
      title: Type.Optional(Type.String()),
    },
    'rebuild-tag-index': {},
  },
  defaultJobOptions: { ...retrying(2, 500), removeOnComplete: { age: 600 } },
  schedulers: () => [{ id: 'ai-rebuild-tag-index', job: 'rebuild-tag-index', payload: {}, repeat: { every: 15 * 60_000 } }],
});
