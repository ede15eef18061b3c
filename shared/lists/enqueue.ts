import type { Queues } from '../queues/producer.js';
import { listChunkJobId } from '../queues/verify-lists.js';

/**
 * Adds the jobs of chunks of a list. Job ids are the list id and the chunk number, so adding a chunk that is already
 * queued or running is a no-op: the creation, a finished chunk and the sweeper may all ask for the same one.
 */
export async function enqueueChunks(
  queues: Pick<Queues, 'enqueue'>,
  listId: string,
  chunks: readonly number[],
) {
  await Promise.all(
    chunks.map((chunk) =>
      queues.enqueue('verify-lists', 'chunk', { listId, chunk }, { jobId: listChunkJobId(listId, chunk) }),
    ),
  );
}
