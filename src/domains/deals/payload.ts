// A deal as its REST read (GET /backend/pipeline/deals/{id}) returns it: the `data` of deal events,
// written by the JSON path (card-json.ts) for the REST read's selection (every field of the card:
// card.ts), not by a mapper of its own. Read with the deal's row and the extras its resolvers show (a
// write's answer, live announcements), and with the change's history rows written, in ONE statement for
// any number of deals. test/webhooks/events.test.ts compares an event's data with the REST read.
import { Prisma, type Deal as DealRow } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import type { SelectedField } from '../../schema/json-fields.js';
import { DEAL_CARD, isList } from './card.js';
import { cardJoins, dealCardSql } from './card-json.js';
import { decodeExtras, EXTRAS_SQL, type DealExtras, type ExtrasJson } from './loaders.js';

export type DealPayload = Record<string, unknown> & { id: string };

/** A field selected whole, as REST selects it (its lists with every item field). */
const whole = (name: string, sub: string[] | null): SelectedField => ({
  key: name,
  name,
  nodes: [],
  sub: () => sub && sub.map((s) => whole(s, null)),
});

/** The REST read's selection of Deal: every field of the card (the graph-only edges are not in REST). */
export const REST_DEAL_SELECTION: readonly SelectedField[] = Object.entries(DEAL_CARD).map(([name, f]) =>
  whole(name, isList(f) ? Object.keys(f.items) : null),
);

const REST_CARD = dealCardSql(REST_DEAL_SELECTION)!;

/** A deal's row, its card extras and its payload, read together inside a transaction. */
export interface DealSnapshot {
  deal: DealRow;
  extras: DealExtras | undefined;
  payload: DealPayload;
}

/** A history entry written by the same statement that reads the snapshots (history.ts). */
export interface HistoryRow {
  deal_id: string;
  type: string;
  from_stage_id: string | null;
  to_stage_id: string | null;
  data: unknown;
  actor_id: string | null;
  created_at: Date;
}

const writeHistory = (tenant: Prisma.Sql, rows: readonly HistoryRow[]) => Prisma.sql`WITH history AS (
    INSERT INTO deal_events (tenant_id, deal_id, type, from_stage_id, to_stage_id, data, actor_id, created_at)
    SELECT ${tenant}, h.deal_id, h.type, h.from_stage_id, h.to_stage_id, h.data, h.actor_id, h.created_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS h(deal_id uuid, type text, from_stage_id uuid, to_stage_id uuid, data jsonb, actor_id uuid, created_at timestamptz))`;

/**
 * The deals (of those ids that exist) by id, each with its extras and payload, after writing `history`
 * (none by default): one statement for any number of deals.
 */
export async function dealSnapshots(
  db: Pick<TenantTx, '$tenantQuery'>,
  ids: readonly string[],
  history: readonly HistoryRow[] = [],
): Promise<Map<string, DealSnapshot>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows = await db.$tenantQuery<(DealRow & { card_extras: ExtrasJson; card_payload: string })[]>(
    (tenant) => Prisma.sql`${history.length ? writeHistory(tenant, history) : Prisma.empty}
    SELECT d.*, ${Prisma.raw(EXTRAS_SQL)} AS card_extras, row_to_json(card)::text AS card_payload
    FROM deals d ${Prisma.raw(cardJoins({ ...REST_CARD, lead: true, todo: true }))} CROSS JOIN LATERAL (SELECT ${Prisma.raw(REST_CARD.columns)}) card
    WHERE ${tenantIs(tenant, 'd')} AND d.id IN (${Prisma.join(unique.map((id) => Prisma.sql`${id}::uuid`))})`,
  );
  return new Map(
    rows.map(({ card_extras, card_payload, ...deal }) => [
      deal.id,
      { deal: deal as DealRow, extras: decodeExtras(card_extras), payload: JSON.parse(card_payload) as DealPayload },
    ]),
  );
}
