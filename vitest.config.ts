import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more forks than this only adds contention against PostgreSQL and Redis.
    maxWorkers: 3,
    // A test file's process is reused for the next file instead of a fresh one per file: loading the services'
    // modules anew for every file was a large share of the suite's wall time. The code keeps no per-database state
    // at module level (every runtime, app and worker pool is its own object) and each file opens its own runtime on
    // its own database and Redis prefix; prom-client's registry, the one thing that is the process's, is reset by
    // the tests that count on it.
    isolate: false,
  },
});
