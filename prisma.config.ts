// Prisma CLI configuration. The CLI runs offline on the JavaScript engine with a driver adapter:
// PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database under DATA_DIR.
import path from 'node:path';
import fs from 'node:fs';
import { defineConfig } from 'prisma/config';

// The Pothos generator asks the CLI for a query-engine library, which the JS engine does not need.
const placeholder = path.join(import.meta.dirname, 'prisma', '.query-engine-placeholder');
if (!fs.existsSync(placeholder)) fs.writeFileSync(placeholder, '');
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= placeholder;

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  engine: 'js',
  experimental: { adapter: true },
  async adapter() {
    if (process.env.DATABASE_URL) {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      return new PrismaPg({ connectionString: process.env.DATABASE_URL });
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    const dir = path.resolve(process.env.DATA_DIR ?? 'data', 'db');
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // pglite-prisma-adapter ships its own copy of the adapter types; they match at run time.
    return new PrismaPGlite(new PGlite(dir)) as never;
  },
});
