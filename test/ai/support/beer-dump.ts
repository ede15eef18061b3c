/**
 * Real data for the AI tests: the beer.stackexchange.com excerpt in data/stackexchange-beer, read
 * once per test file. The retrieval below is a test double for the PostgreSQL full-text search the
 * Q&A service injects (a word-overlap ranking over the same real posts), not a mock of the engine.
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { SaxesParser } from 'saxes';
import type { RetrievedPost } from '../../../shared/ai/index.js';
import { contentStems } from '../../../shared/ai/text/nlp.js';
import { htmlToText } from '../../../shared/ai/text/html-to-text.js';
import { BEER_DUMP_DIR } from '../../../shared/datasets.js';

export const BEER_POSTS = path.join(BEER_DUMP_DIR, 'Posts.xml');

export interface BeerPost {
  id: number;
  type: 'question' | 'answer';
  parentId?: number;
  acceptedAnswerId?: number;
  title: string;
  text: string;
  score: number;
}

export async function readBeerPosts(): Promise<BeerPost[]> {
  const posts: BeerPost[] = [];
  const parser = new SaxesParser();
  parser.on('opentag', (node) => {
    const a = node.attributes as Record<string, string>;
    if (node.name !== 'row' || (a.PostTypeId !== '1' && a.PostTypeId !== '2')) return;
    posts.push({
      id: Number(a.Id),
      type: a.PostTypeId === '1' ? 'question' : 'answer',
      ...(a.ParentId ? { parentId: Number(a.ParentId) } : {}),
      ...(a.AcceptedAnswerId ? { acceptedAnswerId: Number(a.AcceptedAnswerId) } : {}),
      title: a.Title ?? '',
      text: htmlToText(a.Body ?? ''),
      score: Number(a.Score ?? 0),
    });
  });
  for await (const chunk of createReadStream(BEER_POSTS, { encoding: 'utf8' })) {
    parser.write((chunk as string).replace(/^\uFEFF/, ''));
  }
  parser.close();
  return posts;
}

/**
 * Posts sharing at least `minShared` content stems with the query, ranked by the summed IDF of the
 * shared stems — the same idea as PostgreSQL's ts_rank, crude but honest.
 */
export function overlapRetrieve(
  posts: readonly BeerPost[],
  limit = 8,
  minShared = 2,
): (query: string) => Promise<RetrievedPost[]> {
  const questions = new Map(posts.filter((p) => p.type === 'question').map((p) => [p.id, p]));
  const indexed = posts.map((p) => {
    const question = p.type === 'question' ? p : questions.get(p.parentId ?? -1);
    return { post: p, question, stems: new Set(contentStems(`${question?.title ?? ''} ${p.text}`)) };
  });
  const df = new Map<string, number>();
  for (const { stems } of indexed) for (const stem of stems) df.set(stem, (df.get(stem) ?? 0) + 1);
  const idf = (stem: string): number => Math.log(indexed.length / (df.get(stem) ?? 1));
  return async (query) => {
    const wanted = new Set(contentStems(query));
    return indexed
      .map((entry) => {
        const shared = [...wanted].filter((s) => entry.stems.has(s));
        return { entry, shared: shared.length, rank: shared.reduce((sum, s) => sum + idf(s), 0) };
      })
      .filter(
        ({ entry, shared }) => shared >= Math.min(minShared, wanted.size) && shared > 0 && entry.question,
      )
      .sort((a, b) => b.rank - a.rank || b.entry.post.score - a.entry.post.score)
      .slice(0, limit)
      .map(({ entry: { post, question } }) => ({
        questionId: question!.id,
        ...(post.type === 'answer' ? { answerId: post.id } : {}),
        title: question!.title,
        excerpt: post.text.slice(0, 600),
        votes: post.score,
        isAccepted: post.type === 'answer' && question!.acceptedAnswerId === post.id,
      }));
  };
}
