import { parseArgs } from 'node:util';
import { openDatabase } from '../shared/db/client.js';
import { migrateDatabase } from '../shared/db/migrate.js';
import { NotEmptyError, seedDatabase } from '../shared/demo/seed.js';
import { createProgress } from '../shared/progress.js';
import { configOrExit } from '../roles/process.js';

const USAGE = `Usage: npm run seed -- [--questions N] [--seed S] [--reset]
  --questions N  how many questions (default 200, at most 1000000); users, answers, comments and votes scale with it
  --seed S       PRNG seed (default fixed): the same N and S always give the same data
  --reset        empty the Q&A tables first (also deletes API keys, verification lists, webhook subscriptions and polls, which point at users)
Writes to PostgreSQL when DATABASE_URL is set, else to the embedded database in DATA_DIR (./.data).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(1);
}

const positiveInt = (name: string, raw: string | undefined, fallback: number, max: number) => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`${name} must be an integer from 1 to ${max}`);
  return n;
};

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        questions: { type: 'string' },
        seed: { type: 'string' },
        reset: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const questions = positiveInt('--questions', values.questions, 200, 1_000_000);
  const seed = positiveInt('--seed', values.seed, 20_240_601, 2 ** 31 - 1);

  const config = configOrExit();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateDatabase(database);
    const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
    process.stdout.write(`Seeding ${questions} questions into ${where}…\n`);
    const progress = createProgress({ label: 'seeding', main: { table: 'questions', total: questions } });
    const s = await seedDatabase(database, { questions, seed, reset: values.reset, progress });
    progress.done();
    process.stdout.write(
      `Seeded ${s.users} users, ${s.categories} categories, ${s.tags} tags, ${s.questions} questions, ` +
        `${s.answers} answers, ${s.comments} comments, ${s.votes} votes in ${s.seconds} s\n`,
    );
  } catch (err) {
    if (err instanceof NotEmptyError) {
      process.stderr.write(`Refusing to seed: ${err.message}\n`);
      process.exitCode = 1;
    } else throw err;
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  process.stderr.write(`seed failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
