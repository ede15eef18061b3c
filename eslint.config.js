import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const root = path.dirname(fileURLToPath(import.meta.url));
const IGNORED = ['node_modules/', '.data/', 'dist/', 'shared/db/migrations/', 'shared/ai/models/'];

/** Every folder of the source tree that declares an index.ts: its other files are its own business. */
function foldersWithIndex(dir = root, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const folder = path.join(dir, entry.name);
    if (existsSync(path.join(folder, 'index.ts'))) found.push(folder);
    foldersWithIndex(folder, found);
  }
  return found;
}

const modules = foldersWithIndex();

/**
 * Imports past an index.ts that stay, each with its reason (`from` absent: any importer). Entries marked
 * "owner" wait for the folder's owner to export the name from its index.ts.
 */
const BEHIND_INDEX_EXCEPTIONS = [
  // Constants shared with request schemas: through shared/ai/index.ts the Q&A process would load the whole engine.
  { to: 'shared/ai/limits.ts' },
  // The private-address guard serves outbound deliveries and the self-check too; the index would load the
  // verifier with it. It belongs in shared/net/ (owner).
  { to: 'shared/verification/host-guard.ts' },
  // The deliveries queue declares its retry schedule; the index imports the queue back (a cycle).
  { from: 'shared/queues/deliveries.ts', to: 'shared/delivery/schedule.ts' },
  // Not exported by the index yet (owner).
  { to: 'shared/verification/service.ts' },
  { from: 'workers/verify/processor.ts', to: 'shared/verification/dispatch-timers.ts' },
  // The self-check greets a mail host with the engine's own SMTP client.
  { from: 'services/verify/self-check.ts', to: 'shared/verification/smtp-client.ts' },
  { from: 'workers/deliveries/processor.ts', to: 'shared/delivery/attempt.ts' },
  // Offline tools on the engine's training and evaluation parts, which the index leaves out on purpose (owner).
  { from: 'bin/eval-tags.ts', to: 'shared/ai/eval/tag-eval.ts' },
  { from: 'bin/eval-tags.ts', to: 'shared/ai/tags/stackexchange-posts.ts' },
  { from: 'bin/train-spam.ts', to: 'shared/ai/eval/metrics.ts' },
  { from: 'bin/train-spam.ts', to: 'shared/ai/spam/model-file.ts' },
  { from: 'bin/train-spam.ts', to: 'shared/ai/spam/train.ts' },
];

/**
 * Modules behind their index.ts: a file outside a folder that declares an index.ts imports that folder through
 * the index, never a file inside it. Files inside the folder (at any depth) import each other freely.
 */
const behindIndex = {
  meta: {
    type: 'problem',
    messages: {
      internal: '{{target}} is inside {{module}}, which declares an index.ts: import {{index}} instead',
    },
    schema: [{ type: 'object', properties: { allow: { type: 'array' } } }],
  },
  create(context) {
    const file = context.filename;
    const allow = context.options[0]?.allow ?? [];
    const allowed = (target) =>
      allow.some(
        (a) => path.join(root, a.to) === target && (a.from === undefined || path.join(root, a.from) === file),
      );
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source).replace(/\.js$/, '.ts');
      for (const folder of modules) {
        const inside = (p) => p.startsWith(folder + path.sep);
        if (!inside(target) || inside(file) || target === path.join(folder, 'index.ts')) continue;
        if (allowed(target)) continue;
        const rel = (p) => path.relative(root, p);
        context.report({
          node: node.source,
          messageId: 'internal',
          data: { target: rel(target), module: rel(folder), index: rel(path.join(folder, 'index.ts')) },
        });
      }
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default tseslint.config(
  { ignores: IGNORED },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { agora: { rules: { 'behind-index': behindIndex } } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'agora/behind-index': ['error', { allow: BEHIND_INDEX_EXCEPTIONS }],
    },
  },
  // A unit test may reach inside a module to test its parts one by one.
  { files: ['test/**'], rules: { 'agora/behind-index': 'off' } },
);
