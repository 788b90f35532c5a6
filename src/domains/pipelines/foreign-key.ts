// A stage that still has deals can never disappear: the deals' composite foreign key to stages is
// NO ACTION, so even a racing deal insert makes the database refuse the deletion (translated to 409).
import { conflict, constraintViolation } from '../../errors.js';

/** The database refused a deletion because deals still point to the stage (a racing insert or move). */
export function stageInUse(e: unknown): unknown {
  if (constraintViolation(e) === 'foreign_key') return conflict('A etapa possui negócios; informe uma etapa de destino');
  return e;
}
