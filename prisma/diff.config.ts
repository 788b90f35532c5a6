// `npm run schema:diff`: Prisma's diff between the migrations and schema.prisma, on PGlite in memory
// (both the shadow database the migrations are replayed into and the main one), so it needs no server.
// The adapter loads `unaccent` (the knowledge migration creates it) and runs scripts whole, awaited
// (pglite-prisma-adapter's executeScript does not await, and a prepared statement takes one command).
import path from 'node:path';
import { defineConfig } from 'prisma/config';

const root = path.dirname(import.meta.dirname);
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= path.join(root, 'prisma', '.query-engine-placeholder');

async function memoryDatabase() {
  const { PGlite } = await import('@electric-sql/pglite');
  const { unaccent } = await import('@electric-sql/pglite/contrib/unaccent');
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  const lite = new PGlite({ extensions: { unaccent } });
  const adapter = await new PrismaPGlite(lite).connect();
  adapter.executeScript = async (script: string) => void (await lite.exec(script));
  // The engine replays each migration as one raw statement: a script of several runs through exec.
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeRaw = async (query) =>
    query.args.length === 0 && query.sql.includes(';') ? (await lite.exec(query.sql), 0) : executeRaw(query);
  return adapter;
}

export default defineConfig({
  schema: path.join(root, 'prisma', 'schema.prisma'),
  migrations: { path: path.join(root, 'prisma', 'migrations') },
  engine: 'js',
  experimental: { adapter: true },
  async adapter() {
    return {
      provider: 'postgres',
      adapterName: '@prisma/adapter-pglite',
      connect: memoryDatabase,
      connectToShadowDb: memoryDatabase,
    } as never;
  },
});
