// A page's total is remembered with the snapshot it was counted under (src/db/snapshot-counts.ts): a
// statement under the same snapshot skips the count and is answered from memory; any commit changes the
// snapshot, so the next page counts again; a transaction that has written counts its own view and is
// never remembered. On both databases through the lists' APIs, and the mechanism itself with its SQL.
// (On PostgreSQL the snapshot is the whole server's: other test files commit all the time, so there a
// statement is only checked to skip the count when its snapshot was the remembered one.)
import { beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { SnapshotCounts, type CountColumns } from '../../src/db/snapshot-counts.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, type PipelineFixture } from '../helpers/factories.js';
import { testDatabaseKind } from '../helpers/database.js';
import { inbound, makeChannel, nextMobile } from '../messaging/helpers.js';

const api = useTestApp();
let org: Org;
let p: PipelineFixture;
let lead: { id: string };

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  lead = await makeLead(api, org, { name: 'Conta' });
  for (let i = 0; i < 3; i++)
    expect((await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id })).status).toBe(201);
});

const dealsTotal = async () => {
  const r = await api.rest('GET', `/backend/pipelines/${p.id}/deals?limit=2`, { key: org.key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.pagination.total_count as number;
};

describe('the lists count again after every change', () => {
  it('deals: a page read again and again, then after a creation, a move out of the pipeline and a deletion', async () => {
    for (let i = 0; i < 3; i++) expect(await dealsTotal()).toBe(3);
    const made = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    expect(made.status).toBe(201);
    expect(await dealsTotal()).toBe(4);
    expect(await dealsTotal()).toBe(4);
    const other = await makePipeline(api, org, 'Outro');
    await api.db.sql.query(`UPDATE deals SET pipeline_id = $1, stage_id = $2 WHERE id = $3`, [other.id, other.entrada, made.body.id]);
    expect(await dealsTotal()).toBe(3);
    const first = await api.rest('GET', `/backend/pipelines/${p.id}/deals?limit=1`, { key: org.key });
    expect((await api.rest('DELETE', `/backend/pipeline/deals/${first.body.data[0].id}`, { key: org.key })).status).toBe(200);
    expect(await dealsTotal()).toBe(2);
    // Over GraphQL, the same total.
    const gql = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: `query ($id: UUID!) { pipelineDeals(id: $id, limit: 1) { pagination { total_count } } }`,
        variables: { id: p.id },
      }),
    });
    expect(((await gql.json()) as any).data.pipelineDeals.pagination.total_count).toBe(2);
  });

  it('conversations: a new conversation is counted at once', async () => {
    const channel = await makeChannel(api, org);
    const total = async () => (await api.rest('GET', '/backend/conversations?limit=1', { key: org.key })).body.pagination.total as number;
    await inbound(api, org, channel.id, nextMobile());
    expect(await total()).toBe(1);
    expect(await total()).toBe(1);
    await inbound(api, org, channel.id, nextMobile());
    expect(await total()).toBe(2);
  });
});

describe('SnapshotCounts', () => {
  const countOf = (counts: SnapshotCounts) =>
    counts.count(Prisma.sql`SELECT count(*) FROM deals d WHERE d.tenant_id = ${org.tenantId}::uuid AND d.pipeline_id = ${p.id}::uuid`);
  const run = async (counts: SnapshotCounts, client: { $queryRaw<T>(q: Prisma.Sql): Promise<T> } = api.db.prisma) => {
    const count = countOf(counts);
    const [row] = await client.$queryRaw<CountColumns[]>(Prisma.sql`SELECT ${count.columns}`);
    return { row, total: count.read(row) };
  };
  const stored = async () =>
    Number((await api.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM deals WHERE pipeline_id = $1`, [p.id]))[0].n);

  it('skips the count under the remembered snapshot and counts under any other', async () => {
    const counts = new SnapshotCounts();
    const expected = await stored();
    let previous = await run(counts);
    expect(previous.row.total_count).toBe(expected);
    let skipped = 0;
    for (let i = 0; i < 20 && skipped < 3; i++) {
      const next = await run(counts);
      expect(next.total).toBe(expected);
      if (next.row.count_snapshot === previous.row.count_snapshot) {
        expect(next.row.total_count).toBeNull();
        skipped++;
      } else expect(next.row.total_count).toBe(expected);
      previous = next;
    }
    // PGlite is this test's alone: nothing commits between two statements but the job runner, rarely.
    if (testDatabaseKind() === 'pglite') expect(skipped).toBeGreaterThan(0);
  });

  it('a transaction that has written counts its own rows, and that count is not remembered', async () => {
    const counts = new SnapshotCounts();
    const before = await run(counts);
    const inside = await api.db.prisma
      .$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO deals (tenant_id, pipeline_id, stage_id, lead_id, number, value, total)
          VALUES (${org.tenantId}::uuid, ${p.id}::uuid, ${p.entrada}::uuid, ${lead.id}::uuid, 999999, 0, 0)`;
        const seen = await run(counts, tx);
        throw Object.assign(new Error('rollback'), { seen });
      })
      .catch((e: { seen?: Awaited<ReturnType<typeof run>> }) => e.seen!);
    expect(inside.row.count_snapshot).toBeNull();
    expect(inside.total).toBe(before.total + 1);
    const after = await run(counts);
    expect(after.total).toBe(before.total);
    expect(after.total).toBe(await stored());
  });

  it('where one snapshot does not show every commit (a Citus cluster), always counts', async () => {
    // This server has no Citus: its snapshot shows every commit, so the app remembers totals.
    expect(api.db.oneSnapshot).toBe(true);
    const counts = new SnapshotCounts(false);
    const expected = await stored();
    for (let i = 0; i < 3; i++) {
      const { row, total } = await run(counts);
      expect(row).toEqual({ total_count: expected, count_snapshot: null });
      expect(total).toBe(expected);
    }
  });

  it('forgets the least recently used past 1,000 remembered counts', async () => {
    const counts = new SnapshotCounts();
    const entries = (counts as unknown as { entries: Map<string, unknown> }).entries;
    for (let i = 0; i < 1005; i++) {
      const count = counts.count(Prisma.sql`SELECT ${i}::int`);
      count.read({ total_count: i, count_snapshot: 's' });
    }
    expect(entries.size).toBe(1000);
  });
});
