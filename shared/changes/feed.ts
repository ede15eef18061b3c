import type { Database } from '../db/client.js';
import { changesRepository, FEED_TYPES, type ChangeRow, type FeedType } from '../db/repositories/changes.js';
import { AppError, ValidationError } from '../errors.js';

/**
 * GET /changes: every committed change to questions, answers, comments and users, deletions included, in commit
 * order (migration 0012 numbers changes at commit under one lock). A cursor is the seq of the last change a client
 * has seen; the feed is kept for QA_CHANGES_RETENTION_DAYS, and a cursor older than that has expired (410): the
 * client must resynchronise from the lists and start the feed again without one.
 */

export class GoneError extends AppError {
  constructor(message: string) {
    super(410, message);
  }
}

export const MAX_CHANGES_LIMIT = 1000;
const CURSOR_VERSION = 1;
const invalid = () => new ValidationError('Invalid cursor: pass the next_cursor of GET /changes unchanged');

export function encodeChangesCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, feed: 'changes', seq })).toString('base64url');
}

export function decodeChangesCursor(text: string): number {
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { v, feed, seq } = (payload ?? {}) as Record<string, unknown>;
  if (v !== CURSOR_VERSION || feed !== 'changes' || !Number.isSafeInteger(seq) || (seq as number) < 0)
    throw invalid();
  return seq as number;
}

/** "question,answer" → the types, each once, in feed order; a 400 for anything else. */
export function parseTypes(text: string | undefined): FeedType[] {
  if (text === undefined) return [...FEED_TYPES];
  const asked = text.split(',').map((t) => t.trim());
  const unknown = asked.filter((t) => !(FEED_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0 || asked.length === 0)
    throw new ValidationError(`Invalid types: each of ${FEED_TYPES.join(', ')}, separated by commas`);
  return FEED_TYPES.filter((t) => asked.includes(t));
}

export interface FeedPage {
  changes: ChangeRow[];
  next_cursor: string;
  /** More changes of these types were committed after this page, as of its snapshot: read again at once. */
  has_more: boolean;
}

export async function readChanges(
  database: Database,
  options: { since?: string; types?: string; limit: number },
): Promise<FeedPage> {
  const types = parseTypes(options.types);
  const since = options.since === undefined ? undefined : decodeChangesCursor(options.since);
  // One change more than the page says whether more are already committed (has_more).
  const page = await changesRepository(database).page({ since: since ?? 0, types, limit: options.limit + 1 });
  const changes = page.changes.slice(0, options.limit);
  const hasMore = page.changes.length > options.limit;
  if (since !== undefined && since < page.prunedThrough)
    throw new GoneError(
      'This cursor has expired: the changes after it are older than the feed keeps. Resynchronise, then read the feed without a cursor',
    );
  if (since !== undefined && since > page.lastSeq) throw invalid();
  // A full page ends at its last change; a short one has seen every change committed so far (of these types or
  // not), so the next read can start after the last seq handed out.
  const full = changes.length === options.limit;
  const next = full ? changes[changes.length - 1]!.seq : Math.max(page.lastSeq, since ?? 0);
  return { changes, next_cursor: encodeChangesCursor(next), has_more: hasMore };
}
