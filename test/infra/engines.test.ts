import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

/**
 * Issue 18 item 2: `engines.node` in package.json tells the truth. Every Node version it admits must satisfy the
 * `engines.node` of every package `npm ci` installs (the lock file records each one's), so that no version it
 * promises meets a dependency that refuses it. The production tree alone is checked too, for what the image needs.
 */

/** npm's own range logic (semver, installed with npm's tooling in the tree; it ships no type declarations). */
const semver = createRequire(import.meta.url)('semver') as {
  /** Whether every version in `sub` is in `dom`. */
  subset(sub: string, dom: string): boolean;
  satisfies(version: string, range: string): boolean;
};

interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  engines?: { node?: string } | string[];
}

const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as unknown;
const pkg = read('package.json') as { engines: { node: string } };
const lock = read('package-lock.json') as { packages: Record<string, LockEntry> };

const installed = Object.entries(lock.packages)
  .filter(([where]) => where !== '')
  .map(([where, entry]) => ({
    name: where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length),
    version: entry.version,
    dev: entry.dev === true || entry.devOptional === true,
    // Old packages wrote engines as an array of strings; npm ignores those, and so does this.
    node: Array.isArray(entry.engines) ? undefined : entry.engines?.node,
  }))
  .filter((p): p is typeof p & { node: string } => p.node !== undefined);

const refusing = (range: string, packages: typeof installed) =>
  packages
    .filter((p) => !semver.subset(range, p.node))
    .map((p) => `${p.name}@${p.version} needs node ${p.node}`);

describe('engines.node', () => {
  it('is the same in package.json and the lock file', () => {
    expect(lock.packages['']?.engines).toEqual(pkg.engines);
  });

  it('admits no Node version that an installed package refuses', () => {
    expect(refusing(pkg.engines.node, installed)).toEqual([]);
  });

  it('admits no Node version that a production package refuses', () => {
    expect(
      refusing(
        pkg.engines.node,
        installed.filter((p) => !p.dev),
      ),
    ).toEqual([]);
  });

  it('admits the Node version running the tests', () => {
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });
});
