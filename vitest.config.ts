import { defineConfig } from 'vitest/config';

/** The test files that store files: they run once more with TEST_STORAGE=s3, on a bucket (test/helpers/storage.ts). */
const STORAGE_TESTS = [
  'test/storage/storage.test.ts',
  'test/storage/serve.test.ts',
  'test/uploads/**/*.test.ts',
  'test/messaging/send-media.test.ts',
];

// The AWS SDK's notice that its releases after January 2027 need Node 22 (package.json pins one release).
const ENV = { NODE_ENV: 'test', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

/**
 * The test files that replace a dependency's module (vi.mock of graphql or sofa-api): they run in a process
 * of their own (`isolated`), since a module another file already loaded cannot be replaced.
 */
const MOCKING_TESTS = ['test/platform/rest-once.test.ts'];

/**
 * The test files that open no database (the extraction of hostile files, multipart parsing, webhook
 * signing and delivery against a local receiver): the PostgreSQL suite leaves them to the PGlite one,
 * which CI runs beside it on the same two cores (about 70 s of the PostgreSQL suite's 1,100). A file
 * that starts to use the database (helpers/app.ts, a server process, TEST_DATABASE) leaves this list.
 */
const DATABASE_FREE_TESTS = ['test/knowledge/extract.test.ts', 'test/storage/multipart.test.ts', 'test/webhooks/delivery-core.test.ts'];
/** The pure rules (no database, no server, no files): `npm run test:unit` runs them alone, in about a second. */
const UNIT_TESTS = ['test/unit/**/*.test.ts'];
const onPostgres = process.env.TEST_DATABASE === 'postgres';

// TEST_DATABASE=postgres runs the same suite against the PostgreSQL server (each file in its own schema),
// but for DATABASE_FREE_TESTS.
// Projects: `disk`, every test with files in a directory; `s3`, the storage tests again on a bucket;
// `isolated`, the files that mock modules.
//
// Test files share their worker process and its loaded modules (isolate: false): a process and a module
// graph per file took 2.3 s of a CPU per file (Node's start, the dependencies' ESM, Prisma's query
// compiler): 330 of the 1,356 s the PostgreSQL suite took beside the PGlite one on two cores, 835-968 s
// once shared.
// Each file still opens its own app and database (helpers/app.ts) and closes them after its tests.
export default defineConfig({
  // graphql 16 ships CJS (main) and ESM (module); Node loads dependencies' `graphql` as CJS, so make the
  // project's own imports resolve to the same file: one graphql realm.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'disk',
          include: ['test/**/*.test.ts'],
          exclude: [...MOCKING_TESTS, ...UNIT_TESTS, ...(onPostgres ? DATABASE_FREE_TESTS : [])],
          globalSetup: ['test/helpers/global-setup.ts'],
          env: ENV,
        },
      },
      // On PostgreSQL they are left to the PGlite suite, like DATABASE_FREE_TESTS.
      { extends: true, test: { name: 'unit', include: onPostgres ? [] : UNIT_TESTS, env: ENV } },
      {
        extends: true,
        test: { name: 's3', include: STORAGE_TESTS, globalSetup: ['test/helpers/global-setup.ts'], env: { ...ENV, TEST_STORAGE: 's3' } },
      },
      {
        extends: true,
        test: { name: 'isolated', include: MOCKING_TESTS, isolate: true, globalSetup: ['test/helpers/global-setup.ts'], env: ENV },
      },
    ],
  },
});
