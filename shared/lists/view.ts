import type { Database } from '../db/client.js';
import type { ListRecord, ListStatus } from '../db/repositories/verification-lists.js';
import { listCallbackStatus, type CallbackStatus } from './callback.js';

/** A list as the API shows it (docs/verification.md, "Lists"). */
export interface ListView {
  id: string;
  name: string;
  status: ListStatus;
  total: number;
  unique: number;
  duplicates: number;
  processed: number;
  progress: number;
  counts: { valid: number; invalid: number; risky: number; unknown: number };
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  eta_seconds: number | null;
  callback_url: string | null;
  callback: CallbackStatus | null;
}

/**
 * Seconds left: at the rate observed so far (distinct addresses verified per second since the list started), and
 * never less than the wait for the last retry of an address the remote host deferred (greylisting). Null until
 * there is either to go by, and once the list has ended.
 */
export function etaSeconds(
  record: Pick<ListRecord, 'status' | 'probed' | 'unique_count' | 'running_seconds' | 'retry_wait_seconds'>,
): number | null {
  if (record.status !== 'running') return null;
  const waiting =
    record.retry_wait_seconds === null ? null : Math.max(0, Math.ceil(record.retry_wait_seconds));
  if (record.probed === 0 || !record.running_seconds) return waiting;
  const rate = record.probed / record.running_seconds;
  return Math.max(Math.ceil((record.unique_count - record.probed) / rate), waiting ?? 0);
}

export function toListView(record: ListRecord, callback: CallbackStatus | null): ListView {
  return {
    id: record.id,
    name: record.name,
    status: record.status,
    total: record.total,
    unique: record.unique_count,
    duplicates: record.total - record.unique_count,
    processed: record.processed,
    // Floored, so 100 means every row has its result.
    progress: record.total === 0 ? 0 : Math.floor((record.processed * 100) / record.total),
    counts: {
      valid: record.valid_count,
      invalid: record.invalid_count,
      risky: record.risky_count,
      unknown: record.unknown_count,
    },
    created_at: record.created_at,
    started_at: record.started_at,
    completed_at: record.completed_at,
    eta_seconds: etaSeconds(record),
    callback_url: record.callback_url,
    callback: record.callback_url === null ? null : callback,
  };
}

/** The view with its callback's delivery state. */
export async function viewOf(database: Database, record: ListRecord): Promise<ListView> {
  const callback = record.callback_url === null ? null : await listCallbackStatus(database, record.id);
  return toListView(record, callback);
}
