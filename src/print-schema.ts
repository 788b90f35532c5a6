// `npm run schema:print`: writes schema.graphql, the printed SDL. test/schema.test.ts fails when stale.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './domains/index.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../schema.graphql', import.meta.url));

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(SCHEMA_FILE, printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
