// The one won/lost rule (spec "Deal stage moves"), used by create, move, reallocation by a pipeline save
// and stage deletion with a target: every move first clears won_at, lost_at and loss_reason, then
// applies the destination; the lost stage requires a loss reason.
import { invalidField } from '../../errors.js';

export type StageKindValue = 'won' | 'lost' | null;

function lossReason(reason: string | null | undefined): string {
  const r = reason?.trim();
  if (!r) throw invalidField('loss_reason', 'é obrigatório para a etapa de perda');
  if (r.length > 500) throw invalidField('loss_reason', 'aceita no máximo 500 caracteres');
  return r;
}

/** The columns a deal gets on entering a stage of `kind`. */
export function stageState(kind: StageKindValue, reason: string | null | undefined, now: Date) {
  return {
    stage_entered_at: now,
    won_at: kind === 'won' ? now : null,
    lost_at: kind === 'lost' ? now : null,
    loss_reason: kind === 'lost' ? lossReason(reason) : null,
  };
}

/** The history event of entering a stage of `kind`. */
export function transitionEvent(kind: StageKindValue): 'won' | 'lost' | 'stage_changed' {
  return kind === 'won' ? 'won' : kind === 'lost' ? 'lost' : 'stage_changed';
}
