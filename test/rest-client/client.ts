// A front end's typed REST client: openapi-fetch over the types openapi-typescript generated from the
// published document (api.ts). `npm run typecheck` checks this file, so a document that lied about a
// shape (an envelope documented as the bare record, a missing field) fails the build; the
// `@ts-expect-error` lines fail it when the types become too loose. test/platform/openapi.test.ts runs it.
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export type FunilClient = ReturnType<typeof funilClient>;

export function funilClient(baseUrl: string, key: string, fetch?: (request: Request) => Promise<Response>) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` }, ...(fetch ? { fetch } : {}) });
}

/** The code of an error answer: bare routes answer {code, message}, except a 401, which is always the envelope. */
export const codeOf = (error: { code: string } | { error: { code: string } } | undefined) =>
  !error ? undefined : 'code' in error ? error.code : error.error.code;

/** Creates a pipeline, a lead and a deal, moves the deal to the second stage and reads the board. */
export async function boardAfterAMove(client: FunilClient) {
  const pipeline = await client.POST('/backend/pipelines', { body: { name: 'Vendas', new_group_name: 'Comercial' } });
  if (!pipeline.data) throw new Error(`pipeline: ${codeOf(pipeline.error)}`);
  const [first, second] = pipeline.data.stages;

  const lead = await client.POST('/backend/leads', { body: { name: 'Ana', phone: '+5511987650001' } });
  if (!lead.data) throw new Error(`lead: ${codeOf(lead.error)}`);
  // @ts-expect-error an envelope answer carries the lead under `data`
  void lead.data.id;

  const deal = await client.POST('/backend/pipeline/deals', {
    body: { pipeline_id: pipeline.data.id, stage_id: first.id, lead_id: lead.data.data.id, value: 1500 },
  });
  if (!deal.data) throw new Error(`deal: ${codeOf(deal.error)}`);

  const moved = await client.PUT('/backend/pipeline/deals/{id}/stage', {
    params: { path: { id: deal.data.id } },
    body: { stage_id: second.id },
  });
  if (!moved.data) throw new Error(`move: ${codeOf(moved.error)}`);

  const board = await client.GET('/backend/pipelines/{id}/board', { params: { path: { id: pipeline.data.id }, query: { period: '30d' } } });
  if (!board.data) throw new Error(`board: ${codeOf(board.error)}`);
  return {
    dealNumber: deal.data.number,
    movedTo: moved.data.stage_id,
    columns: board.data.stages.map((column) => ({ stage: column.stage.name, deals: column.deal_count, total: column.total })),
  };
}

/** A refused call: its error is typed in the route's style. */
export async function unknownDeal(client: FunilClient, id: string) {
  const { data, error, response } = await client.GET('/backend/pipeline/deals/{id}', { params: { path: { id } } });
  // @ts-expect-error a bare route's error may be the 401 envelope: narrow before reading `code`
  void error?.code;
  return { status: response.status, code: codeOf(error), data };
}
