/** What the tag index is built from: one tagged question of the site. */
import { htmlToText, looksLikeHtml } from '../text/html-to-text.js';

export interface TagRef {
  name: string;
  slug: string;
}

export interface TagRecord {
  id: number | string;
  title: string;
  /** Markdown, plain text or HTML (imported Stack Exchange posts are HTML); tags are stripped. */
  body: string;
  /** Tag names (the slug is derived with slugifyTag) or explicit {name, slug} pairs. */
  tags: ReadonlyArray<string | TagRef>;
}

/** Same shape as Stack Exchange tag names: lower case, words joined by "-". */
export function slugifyTag(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9+#.]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function toTagRef(tag: string | TagRef): TagRef {
  return typeof tag === 'string' ? { name: tag, slug: slugifyTag(tag) } : tag;
}

export function recordText(record: Pick<TagRecord, 'title' | 'body'>): { title: string; body: string } {
  const body =
    looksLikeHtml(record.body) || /<\/?(code|pre|em|strong)>/i.test(record.body)
      ? htmlToText(record.body)
      : record.body;
  return { title: record.title, body };
}
