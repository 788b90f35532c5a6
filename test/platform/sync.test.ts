// Change sync (decisions.md "What integrations rely on"): `updated_since` and `cursor` on the seven lists,
// ordered by (updated_at, id); the next cursor in `pagination.next_cursor` or the X-Next-Cursor header;
// edits move a row to the end; a sync running while another client writes sees every row; cursors stay
// in their organisation and list. A sync page holds only rows written before the oldest open transaction
// (src/domains/common/sync.ts): on PostgreSQL other sessions of the database may hold it back for a
// moment, so the tests wait for it to pass their writes (settled()) where they expect every row at once.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { syncHorizon } from '../../src/domains/common/sync.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makeLead, makePipeline, makeProduct, makeTag } from '../helpers/factories.js';
import { inbound, makeChannel, nextMobile } from '../messaging/helpers.js';

const api = useTestApp();

interface Row {
  id: string;
  updated_at: string;
  [field: string]: unknown;
}

interface Page {
  rows: Row[];
  next: string | null;
}

const EPOCH = '1970-01-01T00:00:00.000Z';

/** Waits until every write that returned before now is below the sync horizon. */
async function settled(): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < 3000 && (await syncHorizon(api.db.prisma)).getTime() <= now; i++) await new Promise((r) => setTimeout(r, 10));
}

async function page(path: string, key: string, params: Record<string, string>): Promise<Page> {
  const r = await api.rest('GET', `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams(params)}`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const body = r.body.success === true && 'data' in r.body && !('pagination' in r.body) ? r.body.data : r.body;
  if (Array.isArray(body)) return { rows: body, next: r.headers.get('x-next-cursor') };
  return { rows: body.data, next: body.pagination.next_cursor };
}

/** A whole sync from `updated_since`, `limit` rows a page: every row, and how many pages it took. */
async function syncAll(path: string, key: string, since = EPOCH, limit = 2): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let params: Record<string, string> = { updated_since: since, limit: String(limit) };
  for (let pages = 1; ; pages++) {
    const p = await page(path, key, params);
    expect(p.rows.length).toBeLessThanOrEqual(limit);
    rows.push(...p.rows);
    if (!p.next) return { rows, pages };
    params = { cursor: p.next, limit: String(limit) };
  }
}

const byUpdatedAtThenId = (a: Row, b: Row) => a.updated_at.localeCompare(b.updated_at) || a.id.localeCompare(b.id);

interface SyncedList {
  /** The list's path for this organisation, a new row and an edit of one (returns nothing). */
  path: string;
  make(i: number): Promise<string>;
  edit(id: string): Promise<void>;
}

const lists: { name: string; setup: (org: Org) => Promise<SyncedList> }[] = [
  {
    name: 'leads',
    setup: async (org) => ({
      path: '/backend/leads',
      make: async (i) => (await makeLead(api, org, { name: `Lead ${i}` })).id,
      edit: async (id) =>
        void expect((await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { company: 'Editada' } })).status).toBe(200),
    }),
  },
  {
    name: 'deals',
    setup: async (org) => {
      const p = await makePipeline(api, org);
      const lead = await makeLead(api, org);
      return {
        path: `/backend/pipelines/${p.id}/deals`,
        make: async () => (await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id })).id,
        // A stage move is an edit.
        edit: async (id) =>
          void expect(
            (await api.rest('PUT', `/backend/pipeline/deals/${id}/stage`, { key: org.key, body: { stage_id: p.andamento } })).status,
          ).toBe(200),
      };
    },
  },
  {
    name: 'conversations',
    setup: async (org) => {
      const channel = await makeChannel(api, org);
      return {
        path: '/backend/conversations',
        make: async (i) => (await inbound(api, org, channel.id, nextMobile(), `mensagem ${i}`)).conversation.id,
        edit: async (id) =>
          void expect((await api.rest('PUT', `/backend/conversations/${id}`, { key: org.key, body: { status: 'archived' } })).status).toBe(
            200,
          ),
      };
    },
  },
  {
    name: 'tags',
    setup: async (org) => ({
      path: '/backend/tags',
      make: async (i) => (await makeTag(api, org, `tag ${i}`)).id,
      edit: async (id) =>
        void expect((await api.rest('PUT', `/backend/tags/${id}`, { key: org.key, body: { color: '#000000' } })).status).toBe(200),
    }),
  },
  {
    name: 'products',
    setup: async (org) => ({
      path: '/backend/pipeline/products',
      make: async (i) => (await makeProduct(api, org, `Produto ${i}`, 10)).id,
      edit: async (id) =>
        void expect(
          (await api.rest('PUT', `/backend/pipeline/products/${id}`, { key: org.key, body: { name: 'Produto editado', price: 20 } }))
            .status,
        ).toBe(200),
    }),
  },
  {
    name: 'knowledge items',
    setup: async (org) => ({
      path: '/backend/knowledge',
      make: async (i) => {
        const r = await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: `Item ${i}` } });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return r.body.id as string;
      },
      edit: async (id) =>
        void expect((await api.rest('PUT', `/backend/knowledge/${id}`, { key: org.key, body: { description: 'Editado' } })).status).toBe(
          200,
        ),
    }),
  },
  {
    name: 'templates',
    // Templates come from the provider's sync: written here as it writes them.
    setup: async (org) => ({
      path: '/backend/templates',
      make: async (i) =>
        (
          await api.db.prisma.template.create({
            data: {
              tenant_id: org.tenantId,
              provider_app_id: 'app',
              template_name: `modelo_${i}`,
              template_id: `t${i}`,
              language: 'pt_BR',
              status: 'APPROVED',
              category: 'UTILITY',
            },
          })
        ).id,
      edit: async (id) => void (await api.db.prisma.template.updateMany({ where: { id }, data: { status: 'REJECTED' } })),
    }),
  },
];

describe.each(lists)('sync of $name', ({ setup }) => {
  it('pages every row by (updated_at, id) with a cursor, and updated_since keeps the later ones', async () => {
    const org = await api.newOrg();
    const list = await setup(org);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await list.make(i));
    await settled();

    const { rows, pages } = await syncAll(list.path, org.key, EPOCH, 2);
    expect(rows.map((r) => r.id).sort()).toEqual([...made].sort());
    expect(rows).toEqual([...rows].sort(byUpdatedAtThenId));
    expect(pages).toBe(3);

    // Later than the second row's time: exactly the rows after it in time.
    const since = rows[1].updated_at;
    const later = await syncAll(list.path, org.key, since, 10);
    expect(later.rows.map((r) => r.id)).toEqual(rows.filter((r) => r.updated_at > since).map((r) => r.id));
    expect(later.pages).toBe(1);

    // Without sync arguments the list answers as before: no cursor.
    const plain = await api.rest('GET', list.path, { key: org.key });
    expect(plain.headers.get('x-next-cursor')).toBeNull();
    if (plain.body.pagination) expect(plain.body.pagination.next_cursor).toBeNull();
  });

  it('an edit moves the row to the end of the sync order', async () => {
    const org = await api.newOrg();
    const list = await setup(org);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(await list.make(i));
    await settled();
    const before = await syncAll(list.path, org.key, EPOCH, 10);
    const last = before.rows[before.rows.length - 1].updated_at;

    const first = before.rows[0].id;
    await list.edit(first);
    await settled();
    // A client that resumes from the last row it saw gets the edited row, and only it.
    const changes = await syncAll(list.path, org.key, last, 10);
    expect(changes.rows.map((r) => r.id)).toEqual([first]);
    const after = await syncAll(list.path, org.key, EPOCH, 10);
    expect(after.rows.map((r) => r.id)).toEqual([...before.rows.slice(1).map((r) => r.id), first]);
  });

  it('refuses a bad cursor or timestamp with 400 naming the parameter', async () => {
    const org = await api.newOrg();
    const list = await setup(org);
    await list.make(0);
    await list.make(1);
    await settled();
    const cursor = (await page(list.path, org.key, { updated_since: EPOCH, limit: '1' })).next!;
    expect(cursor).toEqual(expect.any(String));
    const tampered = cursor.replace(/.(?=\.)/, (c) => (c === 'A' ? 'B' : 'A'));
    const cases: [Record<string, string>, string][] = [
      [{ cursor: 'nope' }, 'cursor'],
      [{ cursor: tampered }, 'cursor'],
      [{ cursor: `${cursor}x` }, 'cursor'],
      [{ updated_since: 'yesterday' }, 'updated_since'],
      [{ updated_since: '2026-13-01T00:00:00Z' }, 'updated_since'],
      [{ updated_since: '2026-11-25 10:00:00' }, 'updated_since'],
    ];
    for (const [params, field] of cases) {
      const r = await api.rest('GET', `${list.path}?${new URLSearchParams(params)}`, { key: org.key });
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.body.error?.details ?? r.body.details, JSON.stringify(params)).toEqual([{ field, message: expect.any(String) }]);
    }
  });
});

describe('sync cursors', () => {
  it('belong to their list: a leads cursor on the tags list is 400', async () => {
    const org = await api.newOrg();
    await makeLead(api, org);
    await makeLead(api, org);
    await settled();
    const cursor = (await page('/backend/leads', org.key, { updated_since: EPOCH, limit: '1' })).next!;
    const r = await api.rest('GET', `/backend/tags?cursor=${encodeURIComponent(cursor)}`, { key: org.key });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
  });

  it('stay in their organisation: another organisation’s cursor is 400, even one rebuilt to name it, and a sync sees only its own rows', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const aLeads = [await makeLead(api, a), await makeLead(api, a), await makeLead(api, a)].map((l) => l.id);
    const bLeads = [await makeLead(api, b), await makeLead(api, b)].map((l) => l.id);
    await settled();

    expect((await syncAll('/backend/leads', a.key, EPOCH, 1)).rows.map((r) => r.id).sort()).toEqual([...aLeads].sort());
    expect((await syncAll('/backend/leads', b.key, EPOCH, 1)).rows.map((r) => r.id).sort()).toEqual([...bLeads].sort());

    const aCursor = (await page('/backend/leads', a.key, { updated_since: EPOCH, limit: '1' })).next!;
    const foreign = await api.rest('GET', `/backend/leads?cursor=${encodeURIComponent(aCursor)}`, { key: b.key });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);

    // A cursor rebuilt by hand (its format is not a secret) to name B but point at A's first lead only
    // positions B's sync: the rows still come from B's organisation.
    const [payload] = aCursor.split('.');
    const [list, , at, id] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, string, number, string];
    const forgedPayload = Buffer.from(JSON.stringify([list, b.tenantId, 0, id])).toString('base64url');
    const forged = `${forgedPayload}.${createHash('sha256').update(`funil-sync:${forgedPayload}`).digest('base64url').slice(0, 12)}`;
    expect(at).toBeGreaterThan(0);
    const r = await api.rest('GET', `/backend/leads?cursor=${encodeURIComponent(forged)}&limit=100`, { key: b.key });
    expect(r.status).toBe(200);
    expect(r.body.data.map((l: Row) => l.id).sort()).toEqual([...bLeads].sort());
  });
});

describe('sync while another client writes', () => {
  it('sees every lead: new ones exactly once, edited ones again with their last state', async () => {
    const org = await api.newOrg();
    const created: string[] = [];
    const edited = new Map<string, string>();
    let writing = true;

    const writer = async (w: number) => {
      for (let i = 0; i < 12; i++) {
        const lead = await makeLead(api, org, { name: `W${w}-${i}` });
        created.push(lead.id);
        if (i % 3 === 1) {
          const company = `Editada ${w}-${i}`;
          expect((await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { company } })).status).toBe(200);
          edited.set(lead.id, company);
        }
      }
    };

    const seen: Row[] = [];
    let since = EPOCH;
    let cursor: string | null = null;
    const pull = async () => {
      const p = await page('/backend/leads', org.key, cursor ? { cursor, limit: '3' } : { updated_since: since, limit: '3' });
      seen.push(...p.rows);
      // On a sync's last page the next sync starts after its last row.
      if (p.rows.length) since = p.rows[p.rows.length - 1].updated_at;
      cursor = p.next;
      return p;
    };
    const reader = async () => {
      while (writing) await pull();
    };

    await Promise.all([Promise.all([writer(1), writer(2)]).finally(() => (writing = false)), reader()]);
    await settled();
    while ((await pull()).next);

    const count = new Map<string, number>();
    for (const row of seen) count.set(row.id, (count.get(row.id) ?? 0) + 1);
    expect([...count.keys()].sort()).toEqual([...created].sort());
    for (const id of created) {
      if (!edited.has(id)) expect(count.get(id), `lead ${id} seen once`).toBe(1);
      // The last time a lead is seen, it is in its last state.
      const last = seen.filter((r) => r.id === id).pop()!;
      expect(last.company ?? null).toBe(edited.get(id) ?? null);
    }
  });
});

describe('writes that change what a row shows move it in the sync', () => {
  /** The row's updated_at after `change` is later than before it. */
  async function movesOn(read: () => Promise<string>, change: () => Promise<unknown>) {
    const before = await read();
    await change();
    expect(Date.parse(await read())).toBeGreaterThan(Date.parse(before));
  }

  it('deal: tag attached and detached, todo added, done and removed, product deleted from the catalog; lead and deal: a tag renamed or deleted', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const product = await makeProduct(api, org, 'Plano', 100);
    const tag = await makeTag(api, org, 'vip');
    const lead = await makeLead(api, org);
    const deal = await makeDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: lead.id,
      products: [{ product_id: product.id, qty: 1 }],
    });
    const dealAt = async () => (await api.rest('GET', `/backend/pipeline/deals/${deal.id}`, { key: org.key })).body.updated_at as string;
    const leadAt = async () => (await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key })).body.data.updated_at as string;
    const ok = (status: number) => async (r: Promise<{ status: number; body: unknown }>) =>
      expect((await r).status, JSON.stringify((await r).body)).toBe(status);

    await movesOn(dealAt, () => ok(200)(api.rest('POST', `/backend/pipeline/deals/${deal.id}/tags/${tag.id}`, { key: org.key })));
    await movesOn(dealAt, () => ok(200)(api.rest('DELETE', `/backend/pipeline/deals/${deal.id}/tags/${tag.id}`, { key: org.key })));
    let todo = '';
    await movesOn(dealAt, async () => {
      const r = await api.rest('POST', `/backend/pipeline/deals/${deal.id}/activities`, { key: org.key, body: { title: 'Ligar' } });
      expect(r.status).toBe(201);
      todo = r.body.id;
    });
    await movesOn(dealAt, () => ok(200)(api.rest('PUT', `/backend/pipeline/activities/${todo}`, { key: org.key, body: { done: true } })));
    await movesOn(dealAt, () => api.rest('DELETE', `/backend/pipeline/activities/${todo}`, { key: org.key }));
    await movesOn(dealAt, () => ok(200)(api.rest('DELETE', `/backend/pipeline/products/${product.id}`, { key: org.key })));
    await movesOn(leadAt, () => ok(200)(api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { tag_ids: [tag.id] } })));

    await ok(200)(api.rest('POST', `/backend/pipeline/deals/${deal.id}/tags/${tag.id}`, { key: org.key }));
    await movesOn(leadAt, () =>
      movesOn(dealAt, () => ok(200)(api.rest('PUT', `/backend/tags/${tag.id}`, { key: org.key, body: { name: 'VIP' } }))),
    );
    await movesOn(leadAt, () => movesOn(dealAt, () => api.rest('DELETE', `/backend/tags/${tag.id}`, { key: org.key })));
  });

  it('updated_at is the database’s: a write that sends an old time still moves the row', async () => {
    const org = await api.newOrg();
    const lead = await makeLead(api, org);
    await api.db.prisma.lead.updateMany({ where: { id: lead.id }, data: { name: 'Antiga', updated_at: new Date('2001-01-01T00:00:00Z') } });
    const row = await api.db.prisma.lead.findFirstOrThrow({ where: { id: lead.id } });
    expect(row.updated_at.getTime()).toBeGreaterThan(Date.parse('2020-01-01T00:00:00Z'));
  });
});

describe('sync over GraphQL', () => {
  async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await r.json()) as { data?: any; errors?: any[]; extensions?: any };
  }

  it('takes the same arguments: next_cursor in pagination, or in extensions for the lists answered whole', async () => {
    const org = await api.newOrg();
    const tags = [await makeTag(api, org, 'a'), await makeTag(api, org, 'b'), await makeTag(api, org, 'c')].map((t) => t.id);
    const leads = [await makeLead(api, org), await makeLead(api, org)].map((l) => l.id);
    await settled();

    const first = await graphql(
      org.key,
      `query ($since: String) { tags(updated_since: $since, limit: 2) { id } leads(updated_since: $since, limit: 1) { data { id } pagination { next_cursor has_more } } }`,
      { since: EPOCH },
    );
    expect(first.errors).toBeUndefined();
    expect(first.data.tags.map((t: Row) => t.id)).toEqual(tags.slice(0, 2));
    expect(first.data.leads.pagination).toEqual({ next_cursor: expect.any(String), has_more: true });
    expect(first.extensions.next_cursor).toEqual({ tags: expect.any(String) });

    const second = await graphql(
      org.key,
      `query ($t: String, $l: String) { tags(cursor: $t) { id } leads(cursor: $l) { data { id } pagination { next_cursor } } }`,
      {
        t: first.extensions.next_cursor.tags,
        l: first.data.leads.pagination.next_cursor,
      },
    );
    expect(second.errors).toBeUndefined();
    expect(second.data.tags.map((t: Row) => t.id)).toEqual(tags.slice(2));
    expect(second.extensions.next_cursor).toEqual({ tags: null });
    expect([...first.data.leads.data, ...second.data.leads.data].map((l: Row) => l.id).sort()).toEqual([...leads].sort());
    expect(second.data.leads.pagination.next_cursor).toBeNull();

    const bad = await graphql(org.key, `{ tags(cursor: "x") { id } }`);
    expect(bad.errors?.[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ field: 'cursor', message: expect.any(String) }],
    });
  });
});
