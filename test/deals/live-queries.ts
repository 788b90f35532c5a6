// The dealChanged subscription as the live tests send it: every card field of the deal.
const CARD = `id number pipeline_id stage_id lead_id owner_id value total origin loss_reason note won_at lost_at stage_entered_at
  created_at updated_at lead_name lead_surname lead_company lead_email lead_phone lead_avatar lead_status_id
  products { id product_id name price qty custom total } tags { id name color created_at updated_at } pending_todos overdue_todos`;
export const DEAL_CHANGED = `subscription ($pipeline_id: UUID!) { dealChanged(pipeline_id: $pipeline_id) { kind deal_id pipeline_id from_stage_id to_stage_id deal { ${CARD} } } }`;

export interface DealChangeEvent {
  kind: 'created' | 'updated' | 'moved' | 'deleted';
  deal_id: string;
  pipeline_id: string;
  from_stage_id: string | null;
  to_stage_id: string | null;
  deal: Record<string, any> | null;
}
