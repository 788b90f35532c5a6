// (d) PostGraphile V5 (the devDependency) on the bench's schema, in this process: a GraphQL server
// generated from the tables, the deals list (and the kanban, bench/kanban.ts) read with its own query (a connection of deals with the
// lead, the lines, the tags through deal_tags and the todo counts). Two computed columns give it the
// card's todo counts and line totals; PgIndexBehaviorsPlugin is off so that deal → deal_tags is
// visible (PostGraphile hides relations without an index on their key). It does not check an API
// key, which the other variants do (one statement fewer).
import http from 'node:http';
import pg from 'pg';

export interface PostGraphileServer {
  url: string;
  statements: { count: number };
  /** The list query and its variables, for a pipeline and a page size. */
  listBody(tenantId: string, pipelineId: string, limit: number): string;
  /** A PostGraphile answer in the shape of Funil's REST answer (for the identical-data check). */
  toRestShape(json: unknown, limit: number): unknown;
  /** The kanban query (README's board query) and its variables, for a pipeline. */
  boardBody(tenantId: string, pipelineId: string): string;
  /** A PostGraphile kanban answer in the shape of Funil's GraphQL answer (its cursors are its own). */
  boardToFunilShape(json: unknown): unknown;
  close(): Promise<void>;
}

/** PostGraphile 5 calls Promise.withResolvers (Node 22); Node 20 lacks it. */
function polyfillWithResolvers() {
  const P = Promise as unknown as { withResolvers?: unknown };
  P.withResolvers ??= function withResolvers<T>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}

const COMPUTED_COLUMNS = `
  CREATE OR REPLACE FUNCTION deals_pending_todos(d deals) RETURNS int LANGUAGE sql STABLE AS
    $$ SELECT count(*)::int FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done $$;
  CREATE OR REPLACE FUNCTION deals_overdue_todos(d deals) RETURNS int LANGUAGE sql STABLE AS
    $$ SELECT count(*)::int FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done AND a.due_at < now() $$;
  CREATE OR REPLACE FUNCTION deal_products_total(p deal_products) RETURNS numeric LANGUAGE sql STABLE AS
    $$ SELECT p.price * p.qty $$;
  CREATE OR REPLACE FUNCTION stages_deals_total(s stages) RETURNS numeric LANGUAGE sql STABLE AS
    $$ SELECT COALESCE(sum(d.total), 0) FROM deals d WHERE d.tenant_id = s.tenant_id AND d.stage_id = s.id $$;`;

const LIST_QUERY = `query BenchDeals($tenantId: UUID!, $pipelineId: UUID!, $first: Int!) {
  allDeals(condition: { tenantId: $tenantId, pipelineId: $pipelineId }, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC], first: $first) {
    totalCount
    nodes {
      rowId number pipelineId stageId leadId ownerId value total origin lossReason note wonAt lostAt stageEnteredAt createdAt updatedAt
      leadByTenantIdAndLeadId { name surname company email phone avatarUrl statusId }
      dealProductsByTenantIdAndDealId(orderBy: [POSITION_ASC, CREATED_AT_ASC, PRIMARY_KEY_ASC]) { nodes { rowId productId name price qty custom total } }
      dealTagsByTenantIdAndDealId { nodes { tagByTenantIdAndTagId { rowId name color createdAt updatedAt } } }
      pendingTodos overdueTodos
    }
  }
}`;

// The kanban (bench/kanban.ts): the README's board query (without a period) as PostGraphile writes it:
// the stages in board order, each with its deal total (a computed column) and its first 20 deals, newest
// first, with their leads; the count per stage is the connection's totalCount.
const BOARD_QUERY = `query BenchBoard($tenantId: UUID!, $pipelineId: UUID!) {
  allStages(condition: { tenantId: $tenantId, pipelineId: $pipelineId }, orderBy: [POSITION_ASC, CREATED_AT_ASC, PRIMARY_KEY_ASC]) {
    nodes {
      name
      dealsTotal
      dealsByTenantIdAndPipelineIdAndStageId(orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC], first: 20) {
        totalCount
        nodes { number total leadByTenantIdAndLeadId { name company } }
        pageInfo { endCursor hasNextPage }
      }
    }
  }
}`;

type Row = Record<string, any>;
const iso = (v: string | null) => (v == null ? null : new Date(v).toISOString());
const num = (v: string | number) => Number(v);

function toRestShape(json: unknown, limit: number): unknown {
  const conn = (json as { data: { allDeals: { totalCount: number; nodes: Row[] } } }).data.allDeals;
  const pages = Math.ceil(conn.totalCount / limit);
  return {
    data: conn.nodes.map((d) => {
      const l = d.leadByTenantIdAndLeadId ?? {};
      return {
        id: d.rowId,
        number: d.number,
        pipeline_id: d.pipelineId,
        stage_id: d.stageId,
        lead_id: d.leadId,
        owner_id: d.ownerId,
        value: num(d.value),
        total: num(d.total),
        origin: d.origin,
        loss_reason: d.lossReason,
        note: d.note,
        won_at: iso(d.wonAt),
        lost_at: iso(d.lostAt),
        stage_entered_at: iso(d.stageEnteredAt),
        created_at: iso(d.createdAt),
        updated_at: iso(d.updatedAt),
        lead_name: l.name ?? null,
        lead_surname: l.surname ?? null,
        lead_company: l.company ?? null,
        lead_email: l.email ?? null,
        lead_phone: l.phone ?? null,
        lead_avatar: l.avatarUrl ?? null,
        lead_status_id: l.statusId ?? null,
        products: d.dealProductsByTenantIdAndDealId.nodes.map((p: Row) => ({
          id: p.rowId,
          product_id: p.productId,
          name: p.name,
          price: num(p.price),
          qty: p.qty,
          custom: p.custom,
          total: num(p.total),
        })),
        // PostGraphile cannot order a join table by the joined tag's name: ordered here, by name then id.
        tags: d.dealTagsByTenantIdAndDealId.nodes
          .map(({ tagByTenantIdAndTagId: t }: Row) => ({
            id: t.rowId,
            name: t.name,
            color: t.color,
            created_at: iso(t.createdAt),
            updated_at: iso(t.updatedAt),
          }))
          .sort((a: Row, b: Row) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1)),
        pending_todos: d.pendingTodos,
        overdue_todos: d.overdueTodos,
      };
    }),
    pagination: {
      current_page: 1,
      total_pages: pages,
      total_count: conn.totalCount,
      has_next: 1 < pages,
      has_prev: false,
      next_cursor: null,
    },
  };
}

/**
 * A PostGraphile board answer in the shape of Funil's GraphQL answer. The totals of the whole board are
 * summed here (in cents, as the raw handler does); endCursor is PostGraphile's own (its cursors are opaque).
 */
function boardToFunilShape(json: unknown): unknown {
  const stages = (json as { data: { allStages: { nodes: Row[] } } }).data.allStages.nodes;
  let cents = 0n;
  for (const s of stages) {
    const [whole, frac = ''] = String(s.dealsTotal).split('.');
    cents += BigInt(whole) * 100n + BigInt((frac + '00').slice(0, 2));
  }
  return {
    data: {
      pipelineBoard: {
        total_deals: stages.reduce((n, s) => n + s.dealsByTenantIdAndPipelineIdAndStageId.totalCount, 0),
        total_amount: Number(cents) / 100,
        stages: stages.map((s) => {
          const deals = s.dealsByTenantIdAndPipelineIdAndStageId;
          return {
            deal_count: deals.totalCount,
            total: num(s.dealsTotal),
            stage: {
              name: s.name,
              deals: {
                totalCount: deals.totalCount,
                nodes: deals.nodes.map((d: Row) => ({
                  number: d.number,
                  total: num(d.total),
                  lead: { name: d.leadByTenantIdAndLeadId.name, company: d.leadByTenantIdAndLeadId.company },
                })),
                pageInfo: { endCursor: deals.pageInfo.endCursor, hasNextPage: deals.pageInfo.hasNextPage },
              },
            },
          };
        }),
      },
    },
  };
}

export async function startPostGraphile(connectionString: string, schema: string, poolSize: number): Promise<PostGraphileServer> {
  polyfillWithResolvers();
  process.env.GRAPHILE_ENV ??= 'production';
  const { postgraphile } = await import('postgraphile');
  const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
  const { makePgService } = await import('postgraphile/adaptors/pg');
  const { grafserv } = await import('postgraphile/grafserv/node');

  const setup = new pg.Client({ connectionString, options: `-c search_path="${schema}"` });
  await setup.connect();
  await setup.query(COMPUTED_COLUMNS);
  await setup.end();

  const statements = { count: 0 };
  const pool = new pg.Pool({ connectionString, max: poolSize, options: `-c search_path="${schema}"` });
  // Every statement PostGraphile sends goes through a pooled client's query().
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      statements.count++;
      return query(...args);
    };
  });
  const pgl = postgraphile({
    extends: [PostGraphileAmberPreset],
    disablePlugins: ['PgIndexBehaviorsPlugin'],
    pgServices: [makePgService({ pool, schemas: [schema] })],
    grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
    grafast: { explain: false },
  });
  const serv = pgl.createServ(grafserv);
  const server = http.createServer();
  await serv.addTo(server);
  await pgl.getSchema();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    statements,
    listBody: (tenantId, pipelineId, limit) => JSON.stringify({ query: LIST_QUERY, variables: { tenantId, pipelineId, first: limit } }),
    toRestShape,
    boardBody: (tenantId, pipelineId) => JSON.stringify({ query: BOARD_QUERY, variables: { tenantId, pipelineId } }),
    boardToFunilShape,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await pgl.release(); // releases the server too
      await pool.end();
    },
  };
}
