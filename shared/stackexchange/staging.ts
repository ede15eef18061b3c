import { existsSync } from 'node:fs';
import path from 'node:path';
import { BatchInserter, type Column } from '../db/bulk/insert.js';
import type { BulkSession } from '../db/bulk/session.js';
import { identicon } from '../demo/people.js';
import { slugify } from '../demo/slug.js';
import { badgeClass } from './badges.js';
import { dumpDate, dumpInt, parseTagList, readDumpRows } from './xml-rows.js';
import { sanitizePostHtml, textToHtml } from '../qa/content.js';

/**
 * Stage one: stream each dump file into temporary tables (dropped at commit), keeping only the attributes we
 * use. Stage two (load.ts) turns them into our rows with set-based SQL: joins resolve parents, owners and
 * accepted answers without holding a whole site in memory.
 */
export const DUMP_FILES = [
  'Users.xml',
  'Posts.xml',
  'Tags.xml',
  'Votes.xml',
  'Comments.xml',
  'Badges.xml',
  'PostLinks.xml',
] as const;

const I = 'int' as const;
const T = 'text' as const;
const D = 'timestamptz' as const;

const TABLES: Record<string, Column[]> = {
  se_users: [
    { name: 'id', type: I },
    { name: 'username_base', type: T },
    { name: 'display_name', type: T },
    { name: 'reputation', type: I },
    { name: 'about', type: T },
    { name: 'avatar', type: T },
    { name: 'created', type: D },
  ],
  se_posts: [
    { name: 'id', type: I },
    { name: 'type', type: I },
    { name: 'parent', type: I },
    { name: 'accepted', type: I },
    { name: 'created', type: D },
    { name: 'edited', type: D },
    { name: 'score', type: I },
    { name: 'views', type: I },
    { name: 'body', type: T },
    { name: 'title', type: T },
    { name: 'slug_base', type: T },
    { name: 'tags', type: T },
    { name: 'owner', type: I },
    { name: 'orphan_key', type: T },
    { name: 'orphan_name', type: T },
    { name: 'answer_count', type: I },
    { name: 'comment_count', type: I },
  ],
  se_tags: [
    { name: 'id', type: I },
    { name: 'name', type: T },
    { name: 'slug', type: T },
    { name: 'count', type: I },
    { name: 'excerpt_post', type: I },
  ],
  se_votes: [
    { name: 'post_id', type: I },
    { name: 'type', type: I },
  ],
  se_comments: [
    { name: 'id', type: I },
    { name: 'post_id', type: I },
    { name: 'score', type: I },
    { name: 'text', type: T },
    { name: 'created', type: D },
    { name: 'owner', type: I },
    { name: 'orphan_key', type: T },
    { name: 'orphan_name', type: T },
  ],
  se_badges: [
    { name: 'user_id', type: I },
    { name: 'class', type: I },
  ],
  se_links: [
    { name: 'post_id', type: I },
    { name: 'related_id', type: I },
    { name: 'type', type: I },
    { name: 'created', type: D },
  ],
};

export interface StagedCounts {
  users: number;
  posts: number;
  otherPosts: number;
  tags: number;
  votes: number;
  comments: number;
  badges: number;
  links: number;
}

/** Which dump files are present; Posts.xml is required, the others are loaded when found. */
export function dumpFiles(dir: string): Record<(typeof DUMP_FILES)[number], string | null> {
  return Object.fromEntries(
    DUMP_FILES.map((f) => [f, existsSync(path.join(dir, f)) ? path.join(dir, f) : null]),
  ) as Record<(typeof DUMP_FILES)[number], string | null>;
}

/** Deleted or missing owners become one placeholder user per display name (what the site itself shows). */
const orphan = (owner: number | null, name: string | undefined): [string, string] => {
  if (name?.trim()) return [slugify(name) || `user-${owner ?? 'anonymous'}`, name.trim()];
  return owner !== null ? [`user-${owner}`, `user${owner}`] : ['anonymous', 'Anonymous'];
};

export async function stageDump(session: BulkSession, dir: string): Promise<StagedCounts> {
  const files = dumpFiles(dir);
  if (!files['Posts.xml']) throw new Error(`${dir} has no Posts.xml: not a Stack Exchange dump folder`);
  for (const [table, columns] of Object.entries(TABLES)) {
    const defs = columns.map((c) => `"${c.name}" ${c.type === I ? 'integer' : c.type}`).join(', ');
    await session.query(`CREATE TEMP TABLE ${table} (${defs}) ON COMMIT DROP`);
  }
  const inserter = (table: string) => new BatchInserter(session, table, TABLES[table]!, { batchSize: 2000 });
  const counts: StagedCounts = {
    users: 0,
    posts: 0,
    otherPosts: 0,
    tags: 0,
    votes: 0,
    comments: 0,
    badges: 0,
    links: 0,
  };

  if (files['Users.xml']) {
    const users = inserter('se_users');
    for await (const a of readDumpRows(files['Users.xml'])) {
      const id = dumpInt(a.Id);
      if (id === null) continue;
      const name = a.DisplayName?.trim() || `user${id}`;
      await users.add([
        id,
        slugify(name, 40),
        name,
        dumpInt(a.Reputation) ?? 1,
        a.AboutMe ?? '',
        a.ProfileImageUrl || identicon(`stackexchange-${id}`),
        dumpDate(a.CreationDate),
      ]);
    }
    await users.flush();
    counts.users = users.written;
  }

  const tagNames = new Set<string>();
  const posts = inserter('se_posts');
  for await (const a of readDumpRows(files['Posts.xml'])) {
    const id = dumpInt(a.Id);
    const type = dumpInt(a.PostTypeId);
    // Questions, answers, and tag-wiki excerpts (type 4, for tag descriptions); other types are not content.
    if (id === null || (type !== 1 && type !== 2 && type !== 4)) {
      counts.otherPosts++;
      continue;
    }
    const owner = dumpInt(a.OwnerUserId);
    const [orphanKey, orphanName] = orphan(owner, a.OwnerDisplayName);
    const tags = type === 1 ? parseTagList(a.Tags) : [];
    for (const t of tags) tagNames.add(t);
    const created = dumpDate(a.CreationDate);
    await posts.add([
      id,
      type,
      dumpInt(a.ParentId),
      dumpInt(a.AcceptedAnswerId),
      created,
      dumpDate(a.LastEditDate) ?? created,
      dumpInt(a.Score) ?? 0,
      dumpInt(a.ViewCount) ?? 0,
      // Imported HTML goes through the same allow-list as rendered Markdown (shared/qa/content.ts).
      sanitizePostHtml(a.Body ?? ''),
      a.Title ?? null,
      type === 1 ? slugify(a.Title ?? '') : null,
      tags.join('|'),
      owner,
      orphanKey,
      orphanName,
      dumpInt(a.AnswerCount),
      dumpInt(a.CommentCount),
    ]);
  }
  await posts.flush();
  counts.posts = posts.written;

  // Tag slugs must be unique: "c#" and "c-sharp" would both slugify to c-sharp, so the later one gets its id.
  const tags = inserter('se_tags');
  const slugs = new Set<string>();
  const slugFor = (name: string, key: string) => {
    const base = slugify(name) || `tag-${key}`;
    const slug = slugs.has(base) ? `${base}-${key}` : base;
    slugs.add(slug);
    return slug;
  };
  if (files['Tags.xml']) {
    for await (const a of readDumpRows(files['Tags.xml'])) {
      const id = dumpInt(a.Id);
      const name = a.TagName?.trim().toLowerCase();
      if (id === null || !name) continue;
      tagNames.delete(name);
      await tags.add([id, name, slugFor(name, String(id)), dumpInt(a.Count) ?? 0, dumpInt(a.ExcerptPostId)]);
    }
  }
  // Tags used by questions but absent from Tags.xml (excerpts of a dump) get ids of ours.
  for (const name of [...tagNames].sort()) await tags.add([null, name, slugFor(name, 'x'), null, null]);
  await tags.flush();
  counts.tags = tags.written;

  if (files['Votes.xml']) {
    // Only up and down votes matter (see load.ts); the rest (favourites, bounties, closes) are skipped here.
    const votes = new BatchInserter(session, 'se_votes', TABLES.se_votes!, { batchSize: 20_000 });
    for await (const a of readDumpRows(files['Votes.xml'])) {
      const type = dumpInt(a.VoteTypeId);
      const post = dumpInt(a.PostId);
      if ((type === 2 || type === 3) && post !== null) await votes.add([post, type]);
    }
    await votes.flush();
    counts.votes = votes.written;
  }

  if (files['Comments.xml']) {
    const comments = inserter('se_comments');
    for await (const a of readDumpRows(files['Comments.xml'])) {
      const id = dumpInt(a.Id);
      const post = dumpInt(a.PostId);
      if (id === null || post === null) continue;
      const owner = dumpInt(a.UserId);
      const [orphanKey, orphanName] = orphan(owner, a.UserDisplayName);
      await comments.add([
        id,
        post,
        dumpInt(a.Score) ?? 0,
        // Comment text is plain text in the dump; content is HTML everywhere, so it is escaped.
        textToHtml(a.Text ?? ''),
        dumpDate(a.CreationDate),
        owner,
        orphanKey,
        orphanName,
      ]);
    }
    await comments.flush();
    counts.comments = comments.written;
  }

  if (files['Badges.xml']) {
    const badges = new BatchInserter(session, 'se_badges', TABLES.se_badges!, { batchSize: 20_000 });
    for await (const a of readDumpRows(files['Badges.xml'])) {
      const user = dumpInt(a.UserId);
      if (user !== null) await badges.add([user, badgeClass(a)]);
    }
    await badges.flush();
    counts.badges = badges.written;
  }
  if (files['PostLinks.xml']) {
    // LinkTypeId 1 is a link, 3 a duplicate (PostId is a duplicate of RelatedPostId); others are not kept.
    const links = inserter('se_links');
    for await (const a of readDumpRows(files['PostLinks.xml'])) {
      const post = dumpInt(a.PostId);
      const related = dumpInt(a.RelatedPostId);
      const type = dumpInt(a.LinkTypeId);
      if (post !== null && related !== null && (type === 1 || type === 3))
        await links.add([post, related, type, dumpDate(a.CreationDate)]);
    }
    await links.flush();
    counts.links = links.written;
  }

  await session.query('CREATE INDEX ON se_posts (id)');
  await session.query('CREATE INDEX ON se_users (id)');
  await session.query('ANALYZE se_posts, se_users, se_tags, se_votes, se_comments, se_badges, se_links');
  return counts;
}
