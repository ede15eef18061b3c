import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('README', () => {
  it('starts with the two set-up commands, and CI runs exactly its test command', () => {
    const readme = read('README.md');
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(firstBlock).toMatch(/^npm ci && npm start/m);
    expect(firstBlock).toMatch(/^npm test/m);
    expect(read('.ci/run')).toMatch(/^npm test( |$)/m);
  });

  it('documents every configuration variable', () => {
    const names = new Set(
      [...read('shared/config.ts').matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)].map((m) => m[1]!),
    );
    const table = read('README.md').split('## Configuration')[1]!.split('\n## ')[0]!;
    // A row may document a pair such as `RATE_LIMIT_ANONYMOUS_HOURLY` / `_DAILY`.
    const documented = new Set<string>();
    for (const row of table.split('\n').filter((l) => l.startsWith('| `'))) {
      const cell = row.split('|')[1]!;
      const [first, ...rest] = [...cell.matchAll(/`([A-Z_][A-Z0-9_]*)`/g)].map((m) => m[1]!);
      if (!first) continue;
      documented.add(first);
      for (const r of rest) documented.add(r.startsWith('_') ? first.replace(/_[A-Z]+$/, r) : r);
    }
    const missing = [...names].filter((n) => !documented.has(n));
    expect(missing).toEqual([]);
  });
});
