// Database refusals that are a client's conflict, not a server error.
//
// A stage that still has deals can never disappear: the deals' composite foreign key to stages is
// NO ACTION, so even a racing deal insert makes the database refuse the deletion (translated to 409).
import { conflict } from '../../errors.js';

/**
 * A foreign-key refusal: Prisma's P2003, or the raw SQLSTATE 23503 that some driver adapters (PGlite)
 * pass through untranslated as a DriverAdapterError.
 */
export function isForeignKeyViolation(e: unknown): boolean {
  const err = e as { code?: string; cause?: { code?: string; kind?: string } } | undefined;
  return err?.code === 'P2003' || err?.cause?.code === '23503' || err?.cause?.kind === 'ForeignKeyConstraintViolation';
}

/** The database refused a deletion because deals still point to the stage (a racing insert or move). */
export function stageInUse(e: unknown): unknown {
  if (isForeignKeyViolation(e)) return conflict('A etapa possui negócios; informe uma etapa de destino');
  return e;
}
