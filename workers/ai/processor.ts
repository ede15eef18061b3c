import {
  AI_DEFAULT_TAG_LIMIT,
  AI_MAX_TAG_LIMIT,
  buildTagIndex,
  createAiEngine,
  type ChatProviderConfig,
} from '../../shared/ai/index.js';
import type { Config } from '../../shared/config.js';
import { aiRetrievalRepository } from '../../shared/db/repositories/ai-retrieval.js';
import type { ProcessorFactory } from '../types.js';
import { trackTagIndex } from './tag-index-tracker.js';
import { tagIndexStore } from './tag-index-store.js';
import { KEY_GROUPS, keyGroup } from '../../shared/keyspace.js';

/**
 * The ai queue. The factory runs once per worker process: the spam model, wink-nlp and the tag index are loaded here
 * and shared by every job (a job never loads a model). Results are shaped as the endpoint returns them.
 */

/** AI jobs are CPU-bound except chat (database + provider round trips); 8 lets those waits overlap. */
const CONCURRENCY = 8;
/** Asked of the engine beyond `limit`, so that tags deleted since the last rebuild can be dropped without coming up short. */
const TAG_SLACK = 5;

/** The provider is used when a URL and a model are configured; local servers (llama.cpp, Ollama) ignore the key. */
export function providerConfig(config: Pick<Config, 'ai'>): ChatProviderConfig | null {
  const { providerUrl, providerKey, model, timeoutMs } = config.ai;
  if (!providerUrl || !model) return null;
  return { baseURL: providerUrl, apiKey: providerKey ?? 'unused', model, timeoutMs };
}

export const aiProcessor: ProcessorFactory<'ai'> = async (deps) => {
  const log = deps.logger.child({ component: 'ai' });
  const repository = aiRetrievalRepository(deps.database);
  const base = deps.config.publicUrl.replace(/\/+$/, '');
  const provider = providerConfig(deps.config);
  if (!provider && (deps.config.ai.providerUrl || deps.config.ai.model)) {
    log.warn(
      'AI_PROVIDER_URL and AI_MODEL must both be set to use a chat provider; using the local composer',
    );
  }
  const engine = createAiEngine({
    findSimilarQuestions: (text) => repository.findSimilarQuestions(text),
    retrieve: (query) => repository.retrieve(query),
    provider,
    sourceUrl: (questionId, answerId) =>
      answerId === undefined
        ? `${base}/api/questions/${questionId}`
        : `${base}/api/questions/${questionId}/answers#answer-${answerId}`,
    logger: log,
  });
  const tagIndex = trackTagIndex(
    engine,
    tagIndexStore(deps.redis, keyGroup(deps.config, KEY_GROUPS.tagIndex)),
    log,
  );
  if (!(await tagIndex.refresh())) {
    // Nothing published yet (a new deployment, or Redis lost it): build one now instead of waiting for the schedule.
    await deps.queues
      .enqueue('ai', 'rebuild-tag-index', {}, { deduplication: { id: 'ai-rebuild-tag-index-missing' } })
      .catch((err: unknown) =>
        log.warn({ err }, 'could not enqueue a tag index rebuild; the schedule will build one'),
      );
  }
  log.info({ provider: provider ? provider.baseURL : null, tagIndex: tagIndex.version }, 'ai engine loaded');

  // A caller waits AI_DEADLINE_MS (20 s) for `run`: with WORKER_LOCK_MS (30 s, checked every 30 s) a killed
  // worker's job came back after the caller had given up, and was skipped as expired. A lock of a quarter of the
  // deadline, checked twice as often, hands it to another worker within about 40 % of it.
  const lockMs = Math.max(
    1000,
    Math.min(deps.config.workerLockMs, Math.round(deps.config.ai.deadlineMs / 4)),
  );
  return {
    concurrency: CONCURRENCY,
    lock: { durationMs: lockMs, stalledIntervalMs: Math.max(500, Math.round(lockMs / 2)) },
    handlers: {
      async run({ action, content, title, limit, expiresAt }, { log: jobLog }) {
        // The request that enqueued this has already answered 503; computing it now only delays fresher jobs.
        if (expiresAt !== undefined && Date.now() > expiresAt) {
          jobLog.info('ai job expired before a worker took it; skipped');
          return { skipped: 'expired' };
        }
        switch (action) {
          case 'spam_check': {
            const { is_spam, confidence } = engine.spamCheck(content);
            return { is_spam, confidence };
          }
          case 'quality_check': {
            const { score, issues } = await engine.qualityCheck(content, title ?? null);
            return { score, issues: issues.map(({ code, message }) => ({ code, message })) };
          }
          case 'suggest_tags': {
            await tagIndex.refresh();
            const wanted = limit ?? AI_DEFAULT_TAG_LIMIT;
            const { tags } = engine.suggestTags(content, Math.min(wanted + TAG_SLACK, AI_MAX_TAG_LIMIT));
            const existing = await repository.existingTags(tags.map((t) => t.slug));
            return {
              tags: tags
                .filter((t) => existing.has(t.slug))
                .slice(0, wanted)
                .map((t) => ({ name: existing.get(t.slug)!.name, slug: t.slug, score: t.score })),
            };
          }
          case 'chat': {
            const { reply, sources, generatedBy } = await engine.chat(content);
            return {
              reply,
              sources: sources.map((s) => ({
                type: s.type,
                id: s.id,
                question_id: s.questionId,
                title: s.title,
                ...(s.url ? { url: s.url } : {}),
                score: s.score,
              })),
              generated_by: generatedBy,
            };
          }
        }
      },

      async 'rebuild-tag-index'(_payload, { log: jobLog }) {
        const started = Date.now();
        const index = await buildTagIndex(repository.taggedQuestions());
        const published = await tagIndex.publish(index);
        const result = {
          ...published,
          questions: index.size,
          tags: index.tags.length,
          durationMs: Date.now() - started,
        };
        jobLog.info(result, 'tag index rebuilt and published');
        return result;
      },
    },
  };
};
