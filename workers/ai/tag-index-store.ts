import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { loadTagIndex, serializeTagIndex, type TagIndex } from '../../shared/ai/index.js';
import type { RedisClient } from '../../shared/redis.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** How long a call waits for the (fail-fast, no offline queue) producer connection to come up, e.g. at boot. */
const CONNECT_WAIT_MS = 10_000;

async function whenReady(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') return;
  await once(redis, 'ready', { signal: AbortSignal.timeout(CONNECT_WAIT_MS) });
}

export interface StoredTagIndex {
  index: TagIndex;
  version: string;
}

/**
 * The published tag index: one Redis hash `${prefix}:ai:tag-index` holding `data` (the serialised index, gzipped: the
 * JSON is mostly repetitive postings) and `version` (changes on every publish). Both fields are written by one HSET,
 * so a reader never pairs a version with another build's data. Every worker polls `version` (one HGET) before using
 * the index and reloads only when it changed.
 */
export function tagIndexStore(redis: RedisClient, prefix: string) {
  const key = `${prefix}:ai:tag-index`;
  return {
    key,

    async publish(index: TagIndex): Promise<{ version: string; bytes: number }> {
      const data = await gzipAsync(Buffer.from(serializeTagIndex(index)));
      const version = `${Date.now()}-${randomBytes(4).toString('hex')}`;
      await whenReady(redis);
      await redis.hset(key, { version, data });
      return { version, bytes: data.length };
    },

    async version(): Promise<string | null> {
      await whenReady(redis);
      return redis.hget(key, 'version');
    },

    async load(): Promise<StoredTagIndex | null> {
      await whenReady(redis);
      const [version, data] = await redis.hmgetBuffer(key, 'version', 'data');
      if (!version || !data) return null;
      const json = (await gunzipAsync(data)).toString('utf8');
      return { index: loadTagIndex(json), version: version.toString('utf8') };
    },
  };
}

export type TagIndexStore = ReturnType<typeof tagIndexStore>;
