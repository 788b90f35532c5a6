// The product catalog: global per organisation, shared by every pipeline. Deal lines copy a product's
// name and price when they are added (deals/lines.ts), so catalog edits never touch existing lines;
// deleting a product turns its lines into one-off lines (custom, no product_id) with the same name,
// price and qty, so deal totals do not change.
import { syncedArray, withSyncKeys, SYNC_ORDER, type SyncArrayArgs } from '../common/sync.js';
import { notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { money, type Money } from '../common/money.js';
import { requiredText } from '../common/validate.js';
import type { Selection } from '../common/types.js';

const NAME_MAX = 255;

export function listProducts(ctx: Context, args: SyncArrayArgs, query: Selection = {}) {
  return syncedArray(
    ctx,
    'products',
    args,
    () => ctx.db.product.findMany({ ...query, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    (where, take) => ctx.db.product.findMany({ ...withSyncKeys(query), where, orderBy: SYNC_ORDER, take }),
  );
}

export function createProduct(ctx: Context, input: { name: string; price?: number | null }, query: Selection = {}) {
  const name = requiredText('name', input.name, NAME_MAX);
  const price = input.price == null ? 0 : money('price', input.price);
  return ctx.db.product.create({ ...query, data: { name, price } });
}

export async function updateProduct(ctx: Context, id: string, input: { name: string; price?: number | null }, query: Selection = {}) {
  const data: { name: string; price?: Money } = { name: requiredText('name', input.name, NAME_MAX) };
  if (input.price != null) data.price = money('price', input.price);
  const { count } = await ctx.db.product.updateMany({ where: { id }, data });
  if (count === 0) throw notFound('Produto');
  return ctx.db.product.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteProduct(ctx: Context, id: string) {
  await ctx.db.$transaction(async (tx) => {
    const db = tx;
    if (!(await db.product.findUnique({ where: { id }, select: { id: true } }))) throw notFound('Produto');
    // Lines keep their copied name, price and qty: totals are unchanged; the lines turn custom, a change
    // their deals show (sync).
    await db.deal.updateMany({ where: { products: { some: { product_id: id } } }, data: { updated_at: new Date() } });
    await db.dealProduct.updateMany({ where: { product_id: id }, data: { product_id: null, custom: true } });
    await db.product.delete({ where: { id }, select: { id: true } });
  });
  return true;
}
