// Product lines: built from the input (catalog copies or one-off lines) and the deal total they imply.
import type { DealProduct } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { invalidInput, notFound } from '../../errors.js';
import { requiredText } from '../common/validate.js';
import { assertStorable, Decimal, money, type Money } from '../common/money.js';

export interface DealProductInput {
  /** An existing line of the same deal (edits): keeps its copied name and price. */
  id?: string | null;
  product_id?: string | null;
  name?: string | null;
  price?: number | null;
  qty?: number | null;
  custom?: boolean | null;
}

export interface LineData {
  product_id: string | null;
  name: string;
  price: Money;
  qty: number;
  custom: boolean;
  position: number;
}

export const MAX_LINES = 200;

const quantity = (qty: number | null | undefined) => (qty == null || !Number.isFinite(qty) || qty < 1 ? 1 : Math.floor(qty));

/**
 * Turns input lines into rows. With product_id, name and price are copied from the catalog now
 * (unknown product → 404). Without it (or with custom), the line is one-off: name required, price ≥ 0.
 * On edits, a line naming an existing line `id` of the deal keeps that line's copied name and price.
 */
export async function buildLines(db: TenantTx, inputs: DealProductInput[], existing: DealProduct[] = []): Promise<LineData[]> {
  if (inputs.length > MAX_LINES) throw invalidInput(`Um negócio aceita no máximo ${MAX_LINES} linhas de produto`);
  const catalogIds = [...new Set(inputs.filter((l) => !l.custom && l.product_id).map((l) => l.product_id!))];
  const catalog = catalogIds.length ? await db.product.findMany({ where: { id: { in: catalogIds } } }) : [];
  const byId = new Map(catalog.map((p) => [p.id, p]));
  const old = new Map(existing.map((l) => [l.id, l]));
  return inputs.map((input, position) => {
    const qty = quantity(input.qty);
    const kept = input.id ? old.get(input.id) : undefined;
    if (input.price != null) money(`products[${position}].price`, input.price); // a negative price is refused whatever the line
    if (kept && !kept.custom && kept.product_id && (input.product_id ?? kept.product_id) === kept.product_id && !input.custom) {
      return { product_id: kept.product_id, name: kept.name, price: kept.price, qty, custom: false, position };
    }
    if (!input.custom && input.product_id) {
      const product = byId.get(input.product_id);
      if (!product) throw notFound('Produto');
      return { product_id: product.id, name: product.name, price: product.price, qty, custom: false, position };
    }
    const name = requiredText(`products[${position}].name`, input.name, 255);
    return { product_id: null, name, price: money(`products[${position}].price`, input.price), qty, custom: true, position };
  });
}

export function linesTotal(lines: Pick<LineData, 'price' | 'qty'>[]): Money {
  return assertStorable(
    'total',
    lines.reduce((sum, l) => sum.plus(new Decimal(l.price).times(l.qty)), new Decimal(0)),
  );
}

export function dealTotal(lines: Pick<LineData, 'price' | 'qty'>[], value: Money): Money {
  return lines.length ? linesTotal(lines) : value;
}
