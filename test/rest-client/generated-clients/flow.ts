// What an integration does with the clients generated from the served document (docs/api.md's commands):
// compiled with strict tsc next to them by test/platform/openapi-clients.test.ts, never in the
// repository (./client and ./schema.ts exist only in the test's temporary directory), then run there.
import { client } from './client/client.gen.js';
import { createChannel, createDeal, createLead, createPipeline, getMediaProxy, moveDeal, postUploads, sendMessage } from './client/index.js';
import type { components, paths } from './schema.js';

/** openapi-typescript's types describe the same answers: a created lead is under `data` (envelope area). */
type CreatedLead = paths['/backend/leads']['post']['responses']['200']['content']['application/json'];
const leadIdOf = (answer: CreatedLead): components['schemas']['UUID'] => answer.data.id;

export interface FlowOptions {
  baseUrl: string;
  key: string;
  /** The fetch every call goes through (the test checks each answer against the document there). */
  fetch: typeof globalThis.fetch;
}

/** Lead, deal, stage move, upload (multipart) and its bytes back through the media proxy, message: through the @hey-api client. */
export async function runFlow({ baseUrl, key, fetch }: FlowOptions) {
  client.setConfig({ baseUrl, fetch, auth: () => key });
  // Errors throw (the answer's body): `data` is then typed as the documented success.
  const once = { throwOnError: true } as const;

  const pipeline = (await createPipeline({ ...once, body: { name: 'Vendas', new_group_name: 'Comercial' } })).data;
  const [first, second] = pipeline.stages;

  const lead = (await createLead({ ...once, body: { name: 'Ana', phone: '+5511987650001' } })).data;
  const leadId = leadIdOf(lead);

  const deal = (await createDeal({ ...once, body: { pipeline_id: pipeline.id, stage_id: first.id, lead_id: leadId, value: 1500 } })).data;
  const moved = (await moveDeal({ ...once, path: { id: deal.id }, body: { stage_id: second.id } })).data;

  const bytes = new TextEncoder().encode('Proposta comercial: plano anual, 12 x R$ 125.');
  const upload = (await postUploads({ ...once, body: { file: new File([bytes], 'proposta.txt', { type: 'text/plain' }), folder: 'propostas' } })).data;
  // The media proxy's path is the file_url below /media/proxy/.
  const storageKey = new URL(upload.file_url).pathname.replace(/^\/media\/proxy\//, '');
  const file = (await getMediaProxy({ ...once, path: { path: storageKey }, parseAs: 'blob' })).data;

  const channel = (await createChannel({ ...once, body: { name: 'Canal de teste', provider: 'test' } })).data;
  const message = (await sendMessage({ ...once, body: { lead_id: leadId, channel_id: channel.data.id, content: 'Olá, Ana! Segue a proposta.' } })).data;

  return {
    dealNumber: deal.number,
    movedTo: moved.stage_id,
    secondStage: second.id,
    upload: { filename: upload.filename, size: upload.size, status: upload.status },
    fileText: await file.text(),
    message: { role: message.data.role, status: message.data.status, content: message.data.content, sameLead: message.data.lead_id === leadId },
  };
}
