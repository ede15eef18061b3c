/**
 * An Okapi BM25 index over the site's tagged questions, used to find the questions most like a
 * new post; their tags then vote (see suggest-tags.ts). Built from an array or an async iterable
 * (a database cursor), serialisable to JSON so that one worker job can rebuild it periodically and
 * every other worker can load it without touching the database.
 */
import { contentStems } from '../text/nlp.js';
import { recordText, toTagRef, type TagRecord, type TagRef } from './tag-record.js';

/** BM25 defaults from the literature; short posts make length normalisation (b) matter little. */
const K1 = 1.2;
const B = 0.75;
/** Title words say what a question is about more densely than body words. */
const TITLE_WEIGHT = 2;

export interface TagIndexFile {
  format: 'agora-tag-index';
  version: 1;
  k1: number;
  b: number;
  avgLength: number;
  tags: Array<TagRef & { count: number }>;
  /** Per question: id, weighted length, indexes into `tags`. */
  docs: Array<{ id: number | string; length: number; tags: number[] }>;
  /** term → flat [docIndex, termFrequency, docIndex, termFrequency, …]. */
  postings: Record<string, number[]>;
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

export class TagIndex {
  private readonly postings: Map<string, number[]>;
  private readonly tagBySlug: Map<string, number>;

  private constructor(private readonly file: TagIndexFile) {
    this.postings = new Map(Object.entries(file.postings));
    this.tagBySlug = new Map(file.tags.map((t, i) => [t.slug, i]));
  }

  static fromJSON(file: TagIndexFile): TagIndex {
    if (file.format !== 'agora-tag-index' || file.version !== 1) throw new Error('tag index: unknown format');
    return new TagIndex(file);
  }

  toJSON(): TagIndexFile {
    return this.file;
  }

  get size(): number {
    return this.file.docs.length;
  }

  get tags(): ReadonlyArray<TagRef & { count: number }> {
    return this.file.tags;
  }

  tagIndexOf(slug: string): number | undefined {
    return this.tagBySlug.get(slug);
  }

  docTags(doc: number): readonly number[] {
    return this.file.docs[doc]?.tags ?? [];
  }

  /**
   * How specific a term is on this site, in [0, 1]: 1 for a term in at most one question, near 0
   * for one in nearly all of them ("beer" on a beer site). Unknown terms count as specific.
   */
  specificity(term: string): number {
    const n = this.file.docs.length;
    const df = (this.postings.get(term)?.length ?? 0) / 2;
    const max = bm25Idf(n, 1);
    return max <= 0 || df <= 1 ? 1 : bm25Idf(n, df) / max;
  }

  /** BM25 scores of the best `limit` questions for the query terms. */
  search(terms: readonly string[], limit: number): ScoredDoc[] {
    const n = this.file.docs.length;
    const scores = new Map<number, number>();
    for (const term of new Set(terms)) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = bm25Idf(n, list.length / 2);
      for (let i = 0; i < list.length; i += 2) {
        const doc = list[i] as number;
        const tf = list[i + 1] as number;
        const length = this.file.docs[doc]?.length ?? 0;
        const norm = tf + this.file.k1 * (1 - this.file.b + (this.file.b * length) / this.file.avgLength);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (this.file.k1 + 1)) / norm);
      }
    }
    return [...scores.entries()]
      .map(([doc, score]) => ({ doc, score }))
      .sort((a, b) => b.score - a.score || a.doc - b.doc)
      .slice(0, limit);
  }
}

function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

export async function buildTagIndex(
  records: Iterable<TagRecord> | AsyncIterable<TagRecord>,
): Promise<TagIndex> {
  const tags: Array<TagRef & { count: number }> = [];
  const tagSlot = new Map<string, number>();
  const docs: TagIndexFile['docs'] = [];
  const postings = new Map<string, number[]>();
  let totalLength = 0;

  for await (const record of records) {
    const tagIds: number[] = [];
    for (const ref of record.tags.map(toTagRef)) {
      let slot = tagSlot.get(ref.slug);
      if (slot === undefined) {
        slot = tags.push({ name: ref.name, slug: ref.slug, count: 0 }) - 1;
        tagSlot.set(ref.slug, slot);
      }
      if (!tagIds.includes(slot)) {
        tagIds.push(slot);
        (tags[slot] as { count: number }).count += 1;
      }
    }
    // Untagged questions cannot vote for anything; skip them to keep the index small.
    if (tagIds.length === 0) continue;

    const { title, body } = recordText(record);
    const frequencies = new Map<string, number>();
    for (const stem of contentStems(title))
      frequencies.set(stem, (frequencies.get(stem) ?? 0) + TITLE_WEIGHT);
    for (const stem of contentStems(body)) frequencies.set(stem, (frequencies.get(stem) ?? 0) + 1);
    let length = 0;
    const docIndex = docs.length;
    for (const [term, tf] of frequencies) {
      length += tf;
      let list = postings.get(term);
      if (!list) {
        list = [];
        postings.set(term, list);
      }
      list.push(docIndex, tf);
    }
    docs.push({ id: record.id, length, tags: tagIds });
    totalLength += length;
  }

  return TagIndex.fromJSON({
    format: 'agora-tag-index',
    version: 1,
    k1: K1,
    b: B,
    avgLength: docs.length === 0 ? 1 : totalLength / docs.length,
    tags,
    docs,
    postings: Object.fromEntries(postings),
  });
}

export function serializeTagIndex(index: TagIndex): string {
  return JSON.stringify(index.toJSON());
}

export function loadTagIndex(json: string | TagIndexFile): TagIndex {
  return TagIndex.fromJSON(typeof json === 'string' ? (JSON.parse(json) as TagIndexFile) : json);
}
