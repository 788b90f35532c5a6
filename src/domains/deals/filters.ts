// Board and list query parameters (spec "Board and list query parameters"; decisions.md `search`,
// `period`), parsed once and turned into one SQL condition shared by the board aggregate, the deals
// list and Stage.deals. Raw SQL is not tenant-scoped: the tenant is always the first condition.
import { Prisma } from '../../generated/prisma/client.js';
import { invalidInput, invalidField } from '../../errors.js';
import { escapeLike } from '../common/like.js';
import { tenantIs } from '../../tenant-sql.js';

export type DealSortValue = 'recent' | 'oldest';
export type DealModeValue = 'created' | 'won' | 'lost';

export interface DealFilterArgs {
  search?: string | null;
  stage_id?: string | null;
  sort?: DealSortValue | null;
  mode?: DealModeValue | null;
  period?: string | null;
  from?: string | null;
  to?: string | null;
}

export interface DealFilter {
  pipelineId: string;
  stageId?: string;
  /** `search` that is a number: the deal number, exactly. */
  number?: number;
  /** `search` text: lead name or company, case-insensitive substring (a LIKE pattern, escaped). */
  pattern?: string;
  dateColumn: 'created_at' | 'won_at' | 'lost_at';
  since?: Date;
  until?: Date;
  sort: DealSortValue;
}

const PERIOD_DAYS: Record<string, number> = { '7d': 7, '30d': 30 };
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** Dates outside these years are refused (decisions.md): PostgreSQL and JavaScript disagree on year 0 and earlier. */
const MIN_YEAR = 1970;
const MAX_YEAR = 9999;

function parseDate(field: string, value: string, endOfDay: boolean): Date {
  const v = value.trim();
  const d = new Date(DATE_ONLY.test(v) ? `${v}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z` : v);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(v)) throw invalidField(field, 'deve ser uma data ISO 8601');
  const year = d.getUTCFullYear();
  if (year < MIN_YEAR || year > MAX_YEAR) throw invalidField(field, `deve estar entre os anos ${MIN_YEAR} e ${MAX_YEAR}`);
  return d;
}

export function parseDealFilter(pipelineId: string, args: DealFilterArgs, now = new Date()): DealFilter {
  const filter: DealFilter = {
    pipelineId,
    sort: args.sort ?? 'recent',
    dateColumn: args.mode === 'won' ? 'won_at' : args.mode === 'lost' ? 'lost_at' : 'created_at',
  };
  if (args.sort != null && args.sort !== 'recent' && args.sort !== 'oldest') throw invalidField('sort', 'deve ser recent ou oldest');
  if (args.stage_id) filter.stageId = args.stage_id;
  const search = args.search?.trim();
  if (search) {
    const digits = /^#?(\d{1,9})$/.exec(search);
    if (digits) filter.number = Number(digits[1]);
    else filter.pattern = `%${escapeLike(search)}%`;
  }
  const period = args.period?.trim();
  if (period) {
    if (period in PERIOD_DAYS) filter.since = new Date(now.getTime() - PERIOD_DAYS[period] * 86_400_000);
    else if (period === '1y') {
      const since = new Date(now);
      since.setUTCFullYear(since.getUTCFullYear() - 1);
      filter.since = since;
    } else if (period === 'custom') {
      if (!args.from && !args.to) throw invalidInput('period=custom exige from e/ou to');
      if (args.from) filter.since = parseDate('from', args.from, false);
      if (args.to) filter.until = parseDate('to', args.to, true);
      if (filter.since && filter.until && filter.since > filter.until) throw invalidField('from', 'deve ser anterior a to');
    } else throw invalidField('period', 'deve ser 7d, 30d, 1y ou custom');
  }
  return filter;
}

/** The WHERE condition over `deals d` (alias fixed) for the tenant fragment of `$tenantQuery`; stage restriction included when `withStage`. */
export function dealConditions(tenant: Prisma.Sql, f: DealFilter, withStage = true): Prisma.Sql {
  const parts: Prisma.Sql[] = [tenantIs(tenant, 'd'), Prisma.sql`d.pipeline_id = ${f.pipelineId}::uuid`];
  if (withStage && f.stageId) parts.push(Prisma.sql`d.stage_id = ${f.stageId}::uuid`);
  if (f.number !== undefined) parts.push(Prisma.sql`d.number = ${f.number}`);
  if (f.pattern !== undefined)
    parts.push(
      Prisma.sql`EXISTS (SELECT 1 FROM leads l WHERE l.tenant_id = d.tenant_id AND l.id = d.lead_id AND (l.name ILIKE ${f.pattern} OR l.company ILIKE ${f.pattern}))`,
    );
  const column = Prisma.raw(`d.${f.dateColumn}`);
  if (f.since) parts.push(Prisma.sql`${column} >= ${f.since}::timestamptz`);
  if (f.until) parts.push(Prisma.sql`${column} <= ${f.until}::timestamptz`);
  return Prisma.join(parts, ' AND ');
}

/** The list's order over `d`, as SQL text: the JSON path orders its array of cards by it too. */
export function dealOrder(f: DealFilter): string {
  return f.sort === 'oldest' ? 'd.created_at ASC, d.id ASC' : 'd.created_at DESC, d.id DESC';
}
