// What a new pipeline or stage starts with (README: "Defaults").

export type StageKind = 'won' | 'lost';

export const DEFAULT_STAGE_COLOR = '215 16% 47%';
export const DEFAULT_LOSS_REASONS = ['Preço', 'Concorrência', 'Sem resposta', 'Sem orçamento', 'Timing'];
export const DEFAULT_STAGES: { name: string; kind: StageKind | null }[] = [
  { name: 'Entrada', kind: null },
  { name: 'Em andamento', kind: null },
  { name: 'Ganho', kind: 'won' },
  { name: 'Perdido', kind: 'lost' },
];
