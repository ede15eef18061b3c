import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { Random } from '../../shared/demo/prng.js';
import { answerBody, commentText, questionBody, questionTitle } from '../../shared/demo/text.js';
import { TOPICS } from '../../shared/demo/topics.js';

/**
 * Writes a synthetic Stack Exchange dump of `posts` posts (Posts.xml, Users.xml, Comments.xml, Tags.xml,
 * Votes.xml, PostLinks.xml) in the format of the real dumps (see data/stackexchange-beer): one `<row …/>` per
 * line, attributes XML-escaped, bodies in HTML, tags as `<a><b>`. The text comes from the demo seed's
 * generator, so an import of this dump and a seed of as many posts do comparable work per post. Streamed file
 * by file with back-pressure: memory stays flat whatever the size.
 */
export interface DumpCounts {
  posts: number;
  questions: number;
  users: number;
  comments: number;
  votes: number;
  links: number;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\n': '&#xA;',
};
const attribute = (value: string) => value.replace(/[&<>"\n]/g, (c) => ESCAPES[c]!);
const html = (text: string) => `<p>${text.split('\n\n').join('</p>\n\n<p>')}</p>\n`;
const date = (ms: number) => new Date(ms).toISOString().slice(0, -1);

/** Streams `<root>` rows into a file, waiting for the disk when the stream's buffer is full. */
async function writeXml(
  file: string,
  root: string,
  rows: (emit: (attrs: string) => Promise<void>) => Promise<void>,
) {
  const out = createWriteStream(file, { encoding: 'utf8' });
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`\uFEFF<?xml version="1.0" encoding="utf-8"?>\n<${root}>\n`);
  await rows((attrs) => write(`  <row ${attrs} />\n`));
  out.end(`</${root}>\n`);
  await once(out, 'finish');
}

const START = Date.UTC(2014, 0, 21);
const SPAN = 8 * 365 * 86_400_000;

export async function writeStackExchangeDump(dir: string, posts: number, seed = 2_014): Promise<DumpCounts> {
  const random = new Random(seed);
  const users = Math.max(20, Math.ceil(posts / 10));
  const tagNames = [...new Set(TOPICS.flatMap((t) => t.tags.map(([name]) => name)))];
  const counts: DumpCounts = { posts: 0, questions: 0, users, comments: 0, votes: 0, links: 0 };
  const owner = () => 1 + Math.floor(users * random.next() ** 2);
  // Scores, kept per post for Votes.xml (a typed array: 4 bytes a post).
  const scores = new Int16Array(posts + 1);

  await writeXml(path.join(dir, 'Users.xml'), 'users', async (row) => {
    for (let id = 1; id <= users; id++) {
      const created = date(START + Math.floor((SPAN * (id - 1)) / users));
      await row(
        `Id="${id}" Reputation="${1 + random.geometric(200)}" CreationDate="${created}" ` +
          `DisplayName="${attribute(`Brewer ${id % 997}`)}" AboutMe="${attribute(html(`Brewing since ${2000 + (id % 20)}.`))}"`,
      );
    }
  });

  await writeXml(path.join(dir, 'Posts.xml'), 'posts', async (row) => {
    let id = 0;
    while (id < posts) {
      const questionId = ++id;
      const topic = TOPICS[Math.floor(TOPICS.length * random.next() ** 1.4)]!;
      const created = START + Math.floor((SPAN * (questionId - 1)) / posts);
      const answers = Math.min(posts - id, random.chance(0.2) ? 0 : 1 + random.geometric(1.2));
      const accepted = answers > 0 && random.chance(0.5) ? questionId + 1 + random.int(0, answers - 1) : 0;
      const tags = random.sample(
        topic.tags.map(([name]) => name),
        1 + Math.min(3, random.geometric(0.8)),
      );
      const score = random.geometric(2) - (random.chance(0.08) ? 3 : 0);
      scores[questionId] = score;
      counts.questions++;
      await row(
        `Id="${questionId}" PostTypeId="1"${accepted ? ` AcceptedAnswerId="${accepted}"` : ''} ` +
          `CreationDate="${date(created)}" Score="${score}" ViewCount="${10 + random.geometric(80)}" ` +
          `Body="${attribute(html(questionBody(random, topic)))}" OwnerUserId="${owner()}" ` +
          `Title="${attribute(questionTitle(random, topic))}" Tags="${attribute(tags.map((t) => `<${t}>`).join(''))}" ` +
          `AnswerCount="${answers}" CommentCount="0"`,
      );
      for (let k = 0; k < answers; k++) {
        const answerId = ++id;
        const answerScore = random.geometric(1.5);
        scores[answerId] = answerScore;
        await row(
          `Id="${answerId}" PostTypeId="2" ParentId="${questionId}" CreationDate="${date(created + 3_600_000 * (k + 1))}" ` +
            `Score="${answerScore}" Body="${attribute(html(answerBody(random, topic)))}" OwnerUserId="${owner()}" CommentCount="0"`,
        );
      }
    }
    counts.posts = id;
  });

  await writeXml(path.join(dir, 'Comments.xml'), 'comments', async (row) => {
    for (let post = 1; post <= counts.posts; post++) {
      const n = random.geometric(0.7);
      for (let k = 0; k < n; k++) {
        const topic = TOPICS[post % TOPICS.length]!;
        await row(
          `Id="${++counts.comments}" PostId="${post}" Score="${random.geometric(0.3)}" ` +
            `Text="${attribute(commentText(random, topic))}" CreationDate="${date(START + Math.floor((SPAN * post) / posts) + 60_000 * (k + 1))}" UserId="${owner()}"`,
        );
      }
    }
  });

  await writeXml(path.join(dir, 'Tags.xml'), 'tags', async (row) => {
    for (const [k, name] of tagNames.entries())
      await row(`Id="${k + 1}" TagName="${attribute(name)}" Count="0"`);
  });

  // Up votes (type 2) and down votes (type 3) that net to each post's score, as the real dumps do.
  await writeXml(path.join(dir, 'Votes.xml'), 'votes', async (row) => {
    for (let post = 1; post <= counts.posts; post++) {
      const score = scores[post]!;
      const down = (score < 0 ? -score : 0) + (random.chance(0.1) ? 1 : 0);
      const day = date(START + Math.floor((SPAN * post) / posts)).slice(0, 10);
      for (let k = 0; k < score + down; k++)
        await row(
          `Id="${++counts.votes}" PostId="${post}" VoteTypeId="2" CreationDate="${day}T00:00:00.000"`,
        );
      for (let k = 0; k < down; k++)
        await row(
          `Id="${++counts.votes}" PostId="${post}" VoteTypeId="3" CreationDate="${day}T00:00:00.000"`,
        );
    }
  });

  // A link or a duplicate now and then, between two posts (the importer keeps those between questions).
  await writeXml(path.join(dir, 'PostLinks.xml'), 'postlinks', async (row) => {
    for (let post = 20; post <= counts.posts; post += 20) {
      const related = 1 + random.int(0, post - 2);
      await row(
        `Id="${++counts.links}" CreationDate="${date(START + Math.floor((SPAN * post) / posts))}" ` +
          `PostId="${post}" RelatedPostId="${related}" LinkTypeId="${random.chance(0.2) ? 3 : 1}"`,
      );
    }
  });
  return counts;
}
