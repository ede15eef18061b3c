import type { AiEngine, TagIndex } from '../../shared/ai/index.js';
import type { Logger } from '../../shared/logger.js';
import type { TagIndexStore } from './tag-index-store.js';

/**
 * Keeps one worker's engine on the latest published tag index. `refresh()` costs one HGET when nothing changed; when
 * the version moved it loads the new index once, however many jobs ask at the same moment. A failure to reach or
 * parse the published index keeps the index already in memory (suggestions from a slightly older index beat none).
 */
export function trackTagIndex(engine: Pick<AiEngine, 'setTagIndex'>, store: TagIndexStore, log: Logger) {
  let loaded: string | null = null;
  let loading: Promise<void> | null = null;

  const load = async () => {
    const stored = await store.load();
    if (!stored) return;
    engine.setTagIndex(stored.index);
    loaded = stored.version;
    log.info({ version: stored.version, questions: stored.index.size }, 'tag index loaded');
  };

  return {
    get version() {
      return loaded;
    },

    /** Loads the published index if it is newer than ours; true when an index is in use after the call. */
    async refresh(): Promise<boolean> {
      try {
        const current = await store.version();
        if (current !== null && current !== loaded) {
          loading ??= load().finally(() => {
            loading = null;
          });
          await loading;
        }
      } catch (err) {
        log.warn({ err }, 'could not refresh the tag index; keeping the one in memory');
      }
      return loaded !== null;
    },

    /** Publishes an index this worker built, and uses it at once. */
    async publish(index: TagIndex): Promise<{ version: string; bytes: number }> {
      const published = await store.publish(index);
      engine.setTagIndex(index);
      loaded = published.version;
      return published;
    },
  };
}
