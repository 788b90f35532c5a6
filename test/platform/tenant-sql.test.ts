// Raw SQL gets its tenant condition from one helper, `tenantIs` (src/tenant-sql.ts): no statement
// in src binds `tenant_id` to a value by hand. Joins between two aliases (`t.tenant_id = dt.tenant_id`,
// `m.tenant_id = ${alias}.tenant_id`) tie a row to one already bound, and stay as they are.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const HELPER_FILE = 'src/tenant-sql.ts';

/** A bound value: an interpolation (`${tenant}`, `${key.tenant_id}`) or a positional parameter (`$1`). */
const VALUE = String.raw`(?:\$\{[^}]*\}(?!\.\w)|\$\d+)`;
/** `tenant_id` compared to a value (either way round), or a value list: `tenant_id = ${tenant}`, `$1::uuid = d.tenant_id`, `tenant_id IN (${…})`. */
const BY_HAND = new RegExp(
  String.raw`\btenant_id\s*(?:=|<>|!=|\bIN\s*\(|=\s*ANY\s*\()\s*${VALUE}|${VALUE}(?:::uuid)?\s*=\s*(?:\w+\.)?tenant_id\b`,
  'gi',
);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === path.join(SRC, 'generated') ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The lines of `tenantIs`' own definition: the one place allowed to write the condition. */
function helperLines(text: string): [number, number] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('export function tenantIs('));
  const end = lines.findIndex((line, i) => i > start && line === '}');
  return start < 0 || end < 0 ? [0, -1] : [start + 1, end + 1];
}

describe('raw SQL and the tenant condition', () => {
  it('binds tenant_id to a value only through tenantIs (src/tenant-sql.ts)', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      const relative = path.relative(process.cwd(), file).split(path.sep).join('/');
      const text = fs.readFileSync(file, 'utf8');
      const [from, to] = relative === HELPER_FILE ? helperLines(text) : [0, -1];
      for (const match of text.matchAll(BY_HAND)) {
        const line = text.slice(0, match.index).split('\n').length;
        if (line >= from && line <= to) continue;
        found.push(`${relative}:${line}: ${match[0]}`);
      }
    }
    expect(
      found,
      'Write the tenant condition with tenantIs from src/tenant-sql.ts: `${tenantIs(tenant, alias)}` in a $tenantQuery ' +
        'statement (`d.tenant_id = $n::uuid`), `${tenantIs(tenantId)}` with a tenant id outside the scoped client. Found:\n' +
        found.join('\n'),
    ).toEqual([]);
  });

  it('the pattern tells a binding from a join', () => {
    const flagged = (sql: string) => [...sql.matchAll(BY_HAND)].length > 0;
    for (const sql of [
      'WHERE d.tenant_id = ${tenant} AND',
      'WHERE tenant_id = ${tenantId}::uuid',
      'WHERE tenant_id = ${key.tenant_id}::uuid',
      'Prisma.sql`tenant_id = ${tenant}`',
      'WHERE k.tenant_id =\n    ${tenant}',
      'WHERE tenant_id = $1 AND id = $2',
      'WHERE ${tenant} = d.tenant_id',
      'WHERE tenant_id IN (${tenants})',
    ])
      expect(flagged(sql), sql).toBe(true);
    for (const sql of [
      'JOIN tags t ON t.tenant_id = dt.tenant_id AND t.id = dt.tag_id',
      'WHERE m.tenant_id = ${alias}.tenant_id AND',
      'WHERE ${tenantIs(tenant, "d")} AND d.id = ${id}::uuid',
      "jsonb_build_object('tenant_id', e.tenant_id)",
    ])
      expect(flagged(sql), sql).toBe(false);
  });
});
