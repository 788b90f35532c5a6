// Input rules shared by the pipeline configuration operations: limits, stage colors, loss reasons.
import { invalidInput, invalidField } from '../../errors.js';

export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 2000;
/** Stages in one pipeline, at most (decisions.md "Bounded work"): GraphQL counts `stages` at this cap. */
export const STAGES_MAX = 50;
const LOSS_REASON_MAX = 255;
const LOSS_REASONS_MAX = 100;

const HSL = /^(\d{1,3}(?:\.\d+)?) (\d{1,3}(?:\.\d+)?)% (\d{1,3}(?:\.\d+)?)%$/;

/** A color token `H S% L%` (H 0-360, S and L 0-100, decimals allowed), e.g. `215 16% 47%`. */
export function stageColor(value: string): string {
  const v = value.trim();
  const m = HSL.exec(v);
  if (!m || Number(m[1]) > 360 || Number(m[2]) > 100 || Number(m[3]) > 100) {
    throw invalidField('color', 'deve estar no formato "H S% L%" (ex.: 215 16% 47%), com H entre 0 e 360 e S e L entre 0% e 100%');
  }
  return v;
}

/** Trimmed, de-duplicated, non-empty loss reasons. */
export function lossReasons(values: string[]): string[] {
  if (values.length > LOSS_REASONS_MAX) throw invalidField('loss_reasons', `aceita no máximo ${LOSS_REASONS_MAX} motivos`);
  const out: string[] = [];
  for (const raw of values) {
    const v = raw.trim();
    if (!v) throw invalidField('loss_reasons', 'não aceita motivos vazios');
    if (v.length > LOSS_REASON_MAX) throw invalidInput(`Cada motivo de perda aceita no máximo ${LOSS_REASON_MAX} caracteres`);
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** The lower bound of a requested position, checked before any transaction (the upper bound needs the rows). */
export function checkPosition(position: number | null | undefined) {
  if (position != null && position < 0) throw invalidField('position', 'deve ser maior ou igual a 0');
}
