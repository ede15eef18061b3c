/**
 * Streams questions out of a Stack Exchange Posts.xml dump (saxes, so a large dump never sits in
 * memory as a tree). Used by bin/eval-tags.ts and the tests to build tag indexes from real data.
 */
import { createReadStream } from 'node:fs';
import { SaxesParser } from 'saxes';
import type { TagRecord } from './tag-record.js';

export interface StackExchangeQuestion extends TagRecord {
  id: number;
  tags: string[];
  score: number;
}

/** "<ale><ipa>" in older dumps, "|ale|ipa|" in newer ones. */
export function parseTagList(value: string | undefined): string[] {
  if (!value) return [];
  const inner = value.startsWith('<') ? value.slice(1, -1).split('><') : value.split('|');
  return inner.map((t) => t.trim()).filter((t) => t !== '');
}

export async function* readStackExchangeQuestions(path: string): AsyncGenerator<StackExchangeQuestion> {
  const parser = new SaxesParser();
  const pending: StackExchangeQuestion[] = [];
  parser.on('opentag', (node) => {
    if (node.name !== 'row') return;
    const a = node.attributes as Record<string, string>;
    if (a.PostTypeId !== '1') return;
    pending.push({
      id: Number(a.Id),
      title: a.Title ?? '',
      body: a.Body ?? '',
      tags: parseTagList(a.Tags),
      score: Number(a.Score ?? 0),
    });
  });
  for await (const chunk of createReadStream(path, { encoding: 'utf8' })) {
    // A UTF-8 byte-order mark before the XML declaration is legal in files but not to saxes.
    parser.write((chunk as string).replace(/^\uFEFF/, ''));
    yield* pending.splice(0);
  }
  parser.close();
  yield* pending.splice(0);
}
