// The isolation matrix (BOLA), generated from the route table and the schema: every REST operation and
// every root field that takes an id is called by organisation A with one id of organisation B at a
// time (in the path or the body; A's own ids everywhere else), and must answer 404 (a list filtered by
// B's id may answer A's empty list) with nothing changed in either organisation.
import { getNamedType, isListType, isNonNullType, type GraphQLArgument } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/domains/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makePipeline, nextPhone } from '../helpers/factories.js';
import { fillPath, fingerprint, graphqlDocument, graphqlOperations, restBody, restOperations, takesFile, type GraphqlOperation, type RestOperation } from '../helpers/operations.js';
import { providerTemplate } from '../templates/helpers.js';
import { PNG, uploadForm } from '../uploads/helpers.js';

const api = useTestApp();

/** Which record an id names: by argument name (`lead_id`, `tag_ids`), or for a path's `:id` by the segment before it. */
const ENTITY: Record<string, string> = {
  lead: 'lead', leads: 'lead', tag: 'tag', tags: 'tag', status: 'status', 'lead-statuses': 'status', lead_status: 'status',
  pipeline: 'pipeline', pipelines: 'pipeline', before_pipeline: 'pipeline', group: 'group', groups: 'group',
  stage: 'stage', stages: 'stage', target_stage: 'stage', deal: 'deal', deals: 'deal', activities: 'activity',
  product: 'product', products: 'product', user: 'user', users: 'user', owner: 'user', 'api-keys': 'apiKey',
  uploads: 'upload', tenant: 'tenant', channel: 'channel', channels: 'channel', conversations: 'conversation',
  department: 'department', departments: 'department', webhooks: 'webhook', delivery: 'delivery',
  assistant: 'assistant', assistants: 'assistant', knowledge: 'knowledge', template: 'template', templates: 'template',
  cadence: 'cadence', cadences: 'cadence', 'cadence-associations': 'association', message: 'message',
};

type World = Record<string, string>;

async function world(org: Org): Promise<World> {
  const post = async (path: string, body: unknown, pick = (b: any) => b.data?.id ?? b.id) => {
    const r = await api.rest('POST', path, { key: org.key, body });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return pick(r.body);
  };
  const w: World = { tenant: org.tenantId };
  w.user = await post('/backend/users', { name: 'u', email: `u-${Math.random()}@example.com`, role: 'operator' });
  w.apiKey = await post('/backend/api-keys', { name: 'k', user_id: w.user });
  w.tag = await post('/backend/tags', { name: 't', color: '#123456' });
  w.status = await post('/backend/lead-statuses', { name: 's', color: '#123456' });
  w.lead = await post('/backend/leads', { name: 'L', phone: nextPhone() });
  const pipeline = await makePipeline(api, org);
  Object.assign(w, { pipeline: pipeline.id, group: pipeline.group_id, stage: pipeline.entrada });
  w.deal = await post('/backend/pipeline/deals', { lead_id: w.lead, pipeline_id: pipeline.id, stage_id: pipeline.entrada });
  w.activity = await post(`/backend/pipeline/deals/${w.deal}/activities`, { title: 'a' });
  w.product = await post('/backend/pipeline/products', { name: 'p', price: 1 });
  w.department = await post('/backend/departments', { name: 'd' });
  w.channel = await post('/backend/channels', { name: 'c', provider: 'test' });
  const inbound = await post(`/backend/channels/${w.channel}/inbound`, { from: nextPhone(), content: 'oi' }, (b) => b.data);
  Object.assign(w, { conversation: inbound.conversation.id, message: inbound.message.id });
  w.webhook = await post('/backend/webhooks', { url: 'https://93.184.215.14/hook', events: ['lead.created'] });
  const event = await api.db.prisma.event.findFirstOrThrow({ where: { tenant_id: org.tenantId } });
  w.delivery = (await api.db.prisma.webhookDelivery.create({
    data: { tenant_id: org.tenantId, webhook_id: w.webhook, event_id: event.id, event_type: event.type, attempt: 1, status: 'failed', duration_ms: 1 },
  })).id;
  w.assistant = await post('/backend/assistants', { name: 'a' });
  w.knowledge = await post('/backend/knowledge', { name: 'k', content: 'texto' });
  await post('/backend/templates/sync', { app_id: 'app', templates: [providerTemplate('t')] }, () => null);
  w.template = (await api.rest('GET', '/backend/templates', { key: org.key })).body[0].id;
  w.cadence = await post('/backend/cadences', { name: 'c' });
  w.association = await post('/backend/templates/cadence-associations', { cadence_id: w.cadence, template_id: w.template, step_index: 0, message_index: 0 });
  const upload = await api.rest('POST', '/backend/uploads', { key: org.key, body: uploadForm({ bytes: PNG, name: 'a.png' }) });
  w.upload = upload.body.id;
  return w;
}

/** Valid values for arguments that are not ids, so that only the id decides the answer. */
function valid(name: string): unknown {
  switch (name) {
    case 'phone':
    case 'from':
    case 'remote_jid':
      return nextPhone();
    case 'email':
      return `x-${Math.random()}@example.com`;
    case 'color':
      return '#654321';
    case 'url':
      return 'https://93.184.215.14/other';
    case 'events':
      return ['lead.created'];
    case 'status':
      return undefined;
    default:
      return undefined;
  }
}

const entityOf = (name: string) => ENTITY[name.replace(/_ids?$/, '')];
const isId = (arg: GraphQLArgument) => getNamedType(arg.type).name === 'UUID';
const listOf = (arg: GraphQLArgument) => isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type);

/** The id slots of a REST operation: path parameters and UUID arguments of its body or query. */
function restSlots(op: RestOperation): { name: string; inPath: boolean; entity: string }[] {
  const slots = op.params.map((p, i) => {
    const before = op.compiled.fullPath.split('/').filter(Boolean);
    const at = before.indexOf(`:${p}`);
    return { name: p, inPath: true, entity: p === 'id' ? ENTITY[before[at - 1]] : entityOf(p) };
  });
  const inPath = new Set(op.params);
  for (const a of op.field?.args ?? []) if (isId(a) && !inPath.has(a.name)) slots.push({ name: a.name, inPath: false, entity: entityOf(a.name) });
  return slots;
}

describe('cross-organisation ids', () => {
  it('answers 404 to every operation given another organisation’s id, on REST and GraphQL, and changes nothing', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const [mine, theirs] = [await world(a), await world(b)];
    const before = [await fingerprint(api.db, a.tenantId), await fingerprint(api.db, b.tenantId)];
    const problems: string[] = [];
    const answered = (status: number, body: unknown, method: string, slotId: string) =>
      status === 404 || (method === 'GET' && status === 200 && !JSON.stringify(body).includes(slotId));
    let calls = 0;

    for (const op of restOperations(schema)) {
      if (op.compiled.route.handler && !op.params.length) continue; // handler routes without ids (uploads, send-media) take no record
      const slots = restSlots(op);
      for (const slot of slots) {
        if (!slot.entity || !(slot.entity in theirs)) {
          problems.push(`${op.method} ${op.compiled.fullPath}: no fixture for ${slot.name}`);
          continue;
        }
        const idOf = (name: string, entity: string | undefined) => (name === slot.name ? theirs[slot.entity] : mine[entity!]);
        const path = fillPath(op, (p) => idOf(p, slots.find((s) => s.name === p)!.entity));
        const bodyIds = (name: string) => {
          const s = slots.find((x) => x.name === name && !x.inPath);
          if (!s) return valid(name);
          const id = idOf(name, s.entity);
          return listOf(op.field!.args.find((x) => x.name === name)!) ? [id] : id;
        };
        let url = path;
        let body = restBody(op, bodyIds, true);
        if (op.method === 'GET' || op.method === 'DELETE') {
          const query = slots.filter((s) => !s.inPath).map((s) => `${s.name}=${idOf(s.name, s.entity)}`);
          if (query.length) url += `?${query.join('&')}`;
          body = undefined;
        }
        const r = await api.rest(op.method, url, { key: a.key, body });
        calls++;
        if (!answered(r.status, r.body, op.method, theirs[slot.entity])) problems.push(`${op.method} ${op.compiled.fullPath} with B's ${slot.name}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }

    // GraphQL: every root field with an id argument, one id of B at a time.
    for (const op of graphqlOperations(schema).filter((o) => !takesFile(o.field) && o.field.args.some(isId))) {
      for (const slot of op.field.args.filter(isId)) {
        const entity = slot.name === 'id' ? entityOfField(op) : entityOf(slot.name);
        if (!entity || !(entity in theirs)) {
          problems.push(`GraphQL ${op.key}: no fixture for ${slot.name}`);
          continue;
        }
        const named = (_: string, arg: string) => {
          const x = op.field.args.find((y) => y.name === arg)!;
          if (!isId(x)) return valid(arg);
          const e = arg === 'id' ? entityOfField(op) : entityOf(arg);
          const id = arg === slot.name ? theirs[entity] : mine[e!];
          return listOf(x) ? [id] : id;
        };
        const doc = graphqlDocument([op], named, true);
        const r = await api.raw('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` }, body: JSON.stringify(doc) });
        const json = await r.json();
        calls++;
        const code = json.errors?.[0]?.extensions?.code;
        const leaked = JSON.stringify(json.data ?? null).includes(theirs[entity]);
        if (leaked || (code !== 'NOT_FOUND' && !(op.root === 'Query' && !json.errors))) problems.push(`GraphQL ${op.key} with B's ${slot.name}: ${JSON.stringify(json).slice(0, 300)}`);
      }
    }

    expect(problems).toEqual([]);
    expect(calls).toBeGreaterThan(150);
    expect([await fingerprint(api.db, a.tenantId), await fingerprint(api.db, b.tenantId)]).toEqual(before);
  });
});

/** The record a root field's `id` names: the REST path of its route, or its return type. */
function entityOfField(op: GraphqlOperation): string | undefined {
  const route = restOperations(schema).find((r) => r.compiled.route.field === op.key);
  if (route) {
    const segments = route.compiled.fullPath.split('/').filter(Boolean);
    return ENTITY[segments[segments.indexOf(':id') - 1]];
  }
  return undefined;
}
