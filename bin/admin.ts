import { parseArgs } from 'node:util';
import { createApiKey } from '../shared/access/admin.js';
import { PLANS, SCOPES, type Plan, type Scope } from '../shared/access/keys.js';
import { adminSessionsRepository } from '../shared/db/repositories/admin-sessions.js';
import { apiKeysRepository } from '../shared/db/repositories/api-keys.js';
import {
  SETTING_DEFAULTS,
  settingsRepository,
  type SettingName,
} from '../shared/db/repositories/settings.js';
import { usersRepository } from '../shared/db/repositories/users.js';
import { isUniqueViolation } from '../shared/db/errors.js';
import { AppError } from '../shared/errors.js';
import { createPoll } from '../shared/polls/creation.js';
import { isSecretName, maskSecret } from '../shared/secrets.js';
import type { Runtime } from '../shared/runtime.js';
import { bootRuntime, cliLogger, configOrExit } from '../roles/process.js';

const USAGE = `Usage: npm run admin -- <command>
  keys create --user NAME [--plan ${PLANS.join('|')}] [--scopes ${SCOPES.join(',')}] [--name TEXT] [--json]
                                 (default: authenticated, qa:write)
  keys list [--json]
  keys revoke ID
  users create NAME [--display-name TEXT]
  settings set NAME VALUE        (settings: ${Object.keys(SETTING_DEFAULTS).join(', ')})
  settings list                  (secrets are shown masked)
  sessions revoke-all            (ends every admin panel session at once)
  polls create --title TEXT --options "A,B,C" [--question ID] [--allow-change] [--json]`;

class UsageError extends Error {}

function list<T extends string>(value: string, allowed: readonly T[], what: string): T[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((i) => !allowed.includes(i as T));
  if (items.length === 0 || bad.length > 0)
    throw new UsageError(`${what} must be from: ${allowed.join(', ')}`);
  return items as T[];
}

function parseSetting(name: string, raw: string): [SettingName, boolean] {
  if (!Object.hasOwn(SETTING_DEFAULTS, name)) throw new UsageError(`unknown setting ${name}`);
  if (raw !== 'true' && raw !== 'false') throw new UsageError(`${name} takes true or false`);
  return [name as SettingName, raw === 'true'];
}

type Command = (runtime: Runtime, args: string[]) => Promise<void>;
const print = (line: string): void => void process.stdout.write(`${line}\n`);

const commands: Record<string, Command> = {
  'keys create': async ({ database }, args) => {
    const { values } = parseArgs({
      args,
      options: {
        user: { type: 'string' },
        plan: { type: 'string', default: 'authenticated' },
        scopes: { type: 'string', default: 'qa:write' },
        name: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.user) throw new UsageError('--user is required');
    const [plan] = list<Plan>(values.plan!, PLANS, '--plan');
    const created = await createApiKey(database.db, {
      username: values.user,
      plan: plan!,
      scopes: list<Scope>(values.scopes!, SCOPES, '--scopes'),
      name: values.name,
    });
    // The key alone on stdout, so `KEY=$(npm run -s admin -- keys create ...)` works.
    print(values.json ? JSON.stringify(created) : created.key);
  },
  'keys list': async ({ database }, args) => {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const keys = (await apiKeysRepository(database.db).list()).map(({ hash: _hash, ...k }) => k);
    if (values.json) return print(JSON.stringify(keys));
    for (const k of keys) {
      const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
      print(`${k.id}\tagora_${k.prefix}_…\t${k.username}\t${k.plan}\t${k.scopes.join(',')}\t${state}`);
    }
  },
  'keys revoke': async ({ database }, [id]) => {
    if (!id || !/^\d+$/.test(id)) throw new UsageError('keys revoke takes a numeric key id');
    const revoked = await apiKeysRepository(database.db).revoke(Number(id));
    print(revoked ? `revoked key ${id}` : `key ${id} is unknown or already revoked`);
    if (!revoked) process.exitCode = 1;
  },
  'users create': async ({ database }, args) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { 'display-name': { type: 'string' } },
    });
    const [username] = positionals;
    if (!username) throw new UsageError('users create takes a user name');
    const user = await usersRepository(database.db).create({ username, displayName: values['display-name'] });
    print(`created user ${user.username} (id ${user.id})`);
  },
  'settings set': async ({ database }, [name, value]) => {
    if (!name || value === undefined) throw new UsageError('settings set takes NAME VALUE');
    const [setting, parsed] = parseSetting(name, value);
    await settingsRepository(database.db).set(setting, parsed);
    print(`${setting} = ${parsed}`);
  },
  'polls create': async ({ database }, args) => {
    const { values } = parseArgs({
      args,
      options: {
        title: { type: 'string' },
        options: { type: 'string' },
        question: { type: 'string' },
        'allow-change': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.title) throw new UsageError('--title is required');
    if (!values.options) throw new UsageError('--options is required: the options, comma-separated');
    const question = values.question;
    if (question !== undefined && !/^\d{1,9}$/.test(question)) throw new UsageError('--question takes an id');
    // Created by the operator: no author, and it may be attached to any question.
    const poll = await createPoll(
      database.db,
      {
        title: values.title,
        options: values.options.split(','),
        questionId: question === undefined ? null : Number(question),
        allowChange: values['allow-change'],
      },
      null,
    );
    const options = poll.options.map(({ id, text }) => ({ id, text }));
    if (values.json) return print(JSON.stringify({ id: poll.id, title: poll.title, options }));
    print(`created poll ${poll.id}: ${options.map((o) => `${o.id}=${o.text}`).join(', ')}`);
  },
  // "Sign out everywhere" for when the panel itself cannot be reached (a lost laptop, a leaked cookie).
  'sessions revoke-all': async ({ database }) => {
    const ended = await adminSessionsRepository(database.db).deleteAll();
    print(`ended ${ended} admin session${ended === 1 ? '' : 's'}`);
  },
  'settings list': async ({ database }) => {
    // The settings table also holds the generated app secret (development without APP_SECRET): never print it.
    for (const [name, value] of Object.entries(await settingsRepository(database.db).all()))
      print(`${name} = ${isSecretName(name) ? maskSecret(value) : JSON.stringify(value)}`);
  },
};

const [group, action, ...rest] = process.argv.slice(2);
const command = commands[`${group} ${action}`];
if (!command) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
const config = configOrExit();
const { runtime } = await bootRuntime(config, cliLogger(config), { migrate: true });
try {
  await command(runtime, rest);
} catch (err) {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}\n`);
  else if (err instanceof AppError) process.stderr.write(`${err.message}\n`);
  else if (isUniqueViolation(err)) process.stderr.write('already exists\n');
  else throw err;
  process.exitCode = 2;
} finally {
  await runtime.close();
}
