// Money on the wire is a number; in the database Decimal(14,2). One rule for every amount (catalog
// prices, deal values, line prices); totals are computed with Decimal so Σ price × qty never picks up
// binary floating-point noise.
import { Prisma } from '../../generated/prisma/client.js';
import { invalidField } from '../../errors.js';

export type Money = Prisma.Decimal;
export const Decimal = Prisma.Decimal;

/** Largest amount a Decimal(14,2) column holds. */
const MAX = new Prisma.Decimal('999999999999.99');

/** A non-negative amount, rounded to cents; refuses negatives, NaN and amounts the column cannot hold. */
export function money(field: string, value: number | null | undefined, fallback = 0): Money {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidField(field, 'deve ser um número');
  if (v < 0) throw invalidField(field, 'não pode ser negativo');
  const d = new Prisma.Decimal(v).toDecimalPlaces(2);
  if (d.greaterThan(MAX)) throw invalidField(field, 'excede o valor máximo permitido');
  return d;
}

export function assertStorable(field: string, d: Money): Money {
  if (d.greaterThan(MAX)) throw invalidField(field, 'excede o valor máximo permitido');
  return d;
}

export const toNumber = (d: Money | number | string | null | undefined): number => (d == null ? 0 : Number(d));
