import { defineConfig } from 'vitest/config';

// TEST_DATABASE=postgres runs the same suite against the PostgreSQL server (each file in its own schema).
export default defineConfig({
  // graphql 16 ships CJS (main) and ESM (module); Node loads dependencies' `graphql` as CJS, so make the
  // project's own imports resolve to the same file: one graphql realm.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    env: { NODE_ENV: 'test' },
  },
});
