import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../shared/db/client.js';
import { migrateDatabase } from '../shared/db/migrate.js';
import { ForeignContentError, importStackExchange } from '../shared/stackexchange/import.js';
import { createProgress } from '../shared/progress.js';
import { configOrExit } from '../roles/process.js';

const USAGE = `Usage: npm run import:stackexchange -- DIR [--reset]
  DIR      a Stack Exchange data-dump folder (Posts.xml required; Users, Tags, Votes, Comments, Badges, PostLinks used when present)
  --reset  empty the Q&A tables first (also deletes API keys, verification lists, webhook subscriptions and polls, which point at users)
Re-running with the same dump updates rows in place (ids are the dump's). See docs/import.md.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(1);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { reset: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
    });
  } catch (err) {
    fail((err as Error).message);
  }
  if (parsed.values.help) return void process.stdout.write(`${USAGE}\n`);
  const [dir, ...extra] = parsed.positionals;
  if (!dir || extra.length > 0) fail('expected exactly one dump folder');
  const folder = path.resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) fail(`${folder} is not a folder`);
  if (!existsSync(path.join(folder, 'Posts.xml')))
    fail(`${folder} has no Posts.xml: not a Stack Exchange dump folder`);

  const config = configOrExit();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateDatabase(database);
    process.stdout.write(`Importing ${folder}…\n`);
    const progress = createProgress({ label: 'importing' });
    const { staged, loaded, seconds } = await importStackExchange(database, folder, {
      reset: parsed.values.reset,
      progress,
    });
    progress.done();
    process.stdout.write(
      `Imported ${loaded.users} users, ${loaded.questions} questions, ${loaded.answers} answers, ${loaded.comments} comments, ` +
        `${loaded.tags} tags, ${loaded.votes} votes, ${loaded.links} question links in ${seconds} s\n` +
        `  placeholders: ${loaded.placeholderUsers} deleted-owner users, ${loaded.voterUsers} anonymous voter users\n` +
        `  skipped: ${staged.otherPosts} posts of other types, ${loaded.skippedAnswers} answers without their question, ` +
        `${loaded.skippedComments} comments on missing posts, ${loaded.skippedVotes} votes on missing posts, ` +
        `${loaded.skippedLinks} links to missing questions\n`,
    );
  } catch (err) {
    if (err instanceof ForeignContentError) {
      process.stderr.write(`Refusing to import: ${err.message}\n`);
      process.exitCode = 1;
    } else throw err;
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  process.stderr.write(`import failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
