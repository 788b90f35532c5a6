// `npm run cli -- seed-demo`: a sample organisation to explore, made through the API itself (the app's
// handlers in this process, with the new organisation's Owner key), so every rule and event applies:
// tags and lead statuses, a product catalog, leads, a sales pipeline with deals in every stage (product
// lines, tags, a won and a lost one), a test channel with conversations and messages, a knowledge item.
import type { App } from './app.js';

export interface DemoOrganisation {
  tenantId: string;
  key: string;
  pipelineId: string;
}

const LEADS = [
  { name: 'Ana Souza', company: 'Padaria Pão Quente', phone: '+5531988887001' },
  { name: 'Bruno Lima', company: 'Oficina Lima', phone: '+5531988887002' },
  { name: 'Carla Dias', company: 'Studio Carla', phone: '+5531988887003' },
  { name: 'Diego Rocha', company: 'Rocha Transportes', phone: '+5531988887004' },
  { name: 'Elisa Martins', company: 'Clínica Bem Estar', phone: '+5531988887005' },
  { name: 'Fábio Costa', company: 'Costa & Filhos', phone: '+5531988887006' },
  { name: 'Gabriela Nunes', company: 'Nunes Moda', phone: '+5531988887007' },
  { name: 'Heitor Alves', company: 'Alves Contabilidade', phone: '+5531988887008' },
];

/** Creates the sample organisation through `app`; `owner` is its Owner's key, `tenantId` its id. */
export async function seedDemo(app: App, owner: { tenantId: string; key: string }): Promise<DemoOrganisation> {
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    // https: a production configuration refuses plain HTTP, and nothing here leaves the process.
    const res = await app.fetch(
      new Request(`https://demo.funil.local${path}`, {
        method,
        headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    if (!res.ok) throw new Error(`seed-demo: ${method} ${path} answered ${res.status}: ${text}`);
    const json = JSON.parse(text) as { data?: T } & T;
    return json.data !== undefined && 'success' in json ? json.data : json;
  };

  const [vip, quente] = [
    await call<{ id: string }>('POST', '/backend/tags', { name: 'vip', color: '#f59e0b' }),
    await call<{ id: string }>('POST', '/backend/tags', { name: 'quente', color: '#ef4444' }),
  ];
  const qualificado = await call<{ id: string }>('POST', '/backend/lead-statuses', { name: 'Qualificado', color: '#22c55e' });
  const products = [
    await call<{ id: string }>('POST', '/backend/pipeline/products', { name: 'Plano Básico', price: 99 }),
    await call<{ id: string }>('POST', '/backend/pipeline/products', { name: 'Plano Pro', price: 299 }),
    await call<{ id: string }>('POST', '/backend/pipeline/products', { name: 'Implantação', price: 1500 }),
  ];
  const leads: { id: string; phone: string }[] = [];
  for (const [i, lead] of LEADS.entries())
    leads.push(
      await call<{ id: string; phone: string }>('POST', '/backend/leads', {
        ...lead,
        ...(i % 3 === 0 ? { tag_ids: [vip.id], status_id: qualificado.id } : {}),
        custom_fields: { origem: i % 2 ? 'Instagram' : 'Indicação' },
      }),
    );

  const pipeline = await call<{ id: string; stages: { id: string; name: string; kind: string | null }[] }>('POST', '/backend/pipelines', {
    name: 'Vendas',
    new_group_name: 'Comercial',
    loss_reasons: ['Preço', 'Sem resposta'],
  });
  const stage = (name: string) => pipeline.stages.find((s) => s.name === name)!.id;
  const deals: [string, number, Record<string, unknown>][] = [
    ['Entrada', 0, { products: [{ product_id: products[0].id, qty: 1 }] }],
    ['Entrada', 1, { value: 450 }],
    ['Entrada', 2, { tag_ids: [quente.id], products: [{ product_id: products[1].id, qty: 2 }] }],
    [
      'Em andamento',
      3,
      {
        products: [
          { product_id: products[1].id, qty: 1 },
          { product_id: products[2].id, qty: 1 },
        ],
      },
    ],
    ['Em andamento', 4, { tag_ids: [vip.id, quente.id], products: [{ product_id: products[2].id, qty: 1 }] }],
    ['Em andamento', 5, { products: [{ name: 'Treinamento da equipe', price: 800, qty: 1 }] }],
    ['Ganho', 6, { products: [{ product_id: products[1].id, qty: 3 }] }],
    ['Perdido', 7, { value: 1200, loss_reason: 'Preço' }],
  ];
  for (const [name, lead, fields] of deals)
    await call('POST', '/backend/pipeline/deals', { pipeline_id: pipeline.id, stage_id: stage(name), lead_id: leads[lead].id, ...fields });

  const channel = await call<{ id: string }>('POST', '/backend/channels', { name: 'WhatsApp (teste)', provider: 'test' });
  const conversations: [number, string, string | null][] = [
    [0, 'Oi! Vocês entregam no sábado?', 'Entregamos sim, até as 14h.'],
    [3, 'Queria um orçamento para 3 caminhões', null],
    [4, 'Bom dia, o plano Pro inclui a implantação?', 'Bom dia! A implantação é à parte; envio a proposta hoje.'],
  ];
  for (const [lead, question, answer] of conversations) {
    await call('POST', `/backend/channels/${channel.id}/inbound`, { from: leads[lead].phone, content: question });
    if (answer) await call('POST', '/backend/messages/send', { lead_id: leads[lead].id, content: answer, channel_id: channel.id });
  }
  await call('POST', '/backend/knowledge', {
    name: 'Horário e entregas',
    content: 'Atendemos de segunda a sábado, das 8h às 18h. Entregas em Belo Horizonte no mesmo dia para pedidos até 12h.',
    usage_instruction: 'Quando o cliente perguntar sobre horário de atendimento ou prazo de entrega.',
  });
  return { ...owner, pipelineId: pipeline.id };
}
