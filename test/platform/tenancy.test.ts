// Tenant isolation: every id of organisation B used with organisation A's key is a 404, and nothing of
// B changes. The matrix below is generated from the route table and the schema: every REST operation
// and every root field that takes an id is called by A with one id of B at a time (in the path or the
// body; A's own ids everywhere else) and must answer 404 (a list filtered by B's id may answer A's empty
// list), with nothing changed in either organisation.
import { describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { getNamedType, isListType, isNonNullType, type GraphQLArgument } from 'graphql';
import { schema } from '../../src/domains/index.js';
import { makePipeline, nextPhone } from '../helpers/factories.js';
import {
  fillPath,
  fingerprint,
  graphqlDocument,
  graphqlOperations,
  restBody,
  restOperations,
  takesFile,
  type GraphqlOperation,
  type RestOperation,
} from '../helpers/operations.js';
import { providerTemplate } from '../templates/helpers.js';
import { PNG, uploadForm } from '../uploads/helpers.js';

const api = useTestApp();

async function snapshot(tenantId: string) {
  const p = api.db.prisma;
  const where = { tenant_id: tenantId };
  return {
    leads: await p.lead.findMany({ where, orderBy: { id: 'asc' } }),
    leadTags: await p.leadTag.findMany({ where, orderBy: [{ lead_id: 'asc' }, { tag_id: 'asc' }] }),
    tags: await p.tag.findMany({ where, orderBy: { id: 'asc' } }),
    statuses: await p.leadStatus.findMany({ where, orderBy: { id: 'asc' } }),
    keys: await p.apiKey.findMany({ where, orderBy: { id: 'asc' }, omit: { last_used_at: true } }),
    users: await p.user.findMany({ where, orderBy: { id: 'asc' } }),
  };
}

describe('tenant isolation', () => {
  it('answers 404 for every id of another organisation and changes nothing', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const bTag = (await api.rest('POST', '/backend/tags', { key: b.key, body: { name: 'b-tag', color: '#111111' } })).body.data;
    const bStatus = (await api.rest('POST', '/backend/lead-statuses', { key: b.key, body: { name: 'b-status', color: '#222222' } })).body
      .data;
    const bLead = (
      await api.rest('POST', '/backend/leads', {
        key: b.key,
        body: { name: 'B lead', phone: '+5511977777777', tag_ids: [bTag.id], status_id: bStatus.id },
      })
    ).body.data;
    const bKey = (await api.rest('POST', '/backend/api-keys', { key: b.key, body: { name: 'b key' } })).body.data;
    const before = await snapshot(b.tenantId);

    const attempts: [string, string, unknown?][] = [
      ['GET', `/backend/leads/${bLead.id}`],
      ['PUT', `/backend/leads/${bLead.id}`, { name: 'hijacked' }],
      ['DELETE', `/backend/leads/${bLead.id}`],
      ['PUT', `/backend/tags/${bTag.id}`, { name: 'hijacked' }],
      ['DELETE', `/backend/tags/${bTag.id}`],
      ['POST', `/backend/api-keys/${bKey.id}/revoke`],
      ['DELETE', `/backend/api-keys/${bKey.id}`],
      ['POST', '/backend/api-keys', { name: 'for b user', user_id: b.userId }],
      ['POST', '/backend/leads', { name: 'x', phone: '+5511966666666', tag_ids: [bTag.id] }],
      ['POST', '/backend/leads', { name: 'x', phone: '+5511966666666', status_id: bStatus.id }],
    ];
    for (const [method, path, body] of attempts) {
      const r = await api.rest(method, path, { key: a.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body, `${method} ${path}`).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
    // GraphQL answers the same.
    const g = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
      body: JSON.stringify({ query: 'query($id: UUID!) { lead(id: $id) { id } }', variables: { id: bLead.id } }),
    });
    expect((await g.json()).errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    expect(await snapshot(b.tenantId)).toEqual(before);
    // A's lists do not show B's rows.
    expect((await api.rest('GET', '/backend/leads', { key: a.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/tags', { key: a.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/users', { key: a.key })).body.data.map((u: any) => u.id)).toEqual([a.userId]);
    // And B's key still works.
    expect((await api.rest('GET', `/backend/leads/${bLead.id}`, { key: b.key })).status).toBe(200);
  });

  it('the database refuses a row that points into another organisation', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const bTag = (await api.rest('POST', '/backend/tags', { key: b.key, body: { name: 't', color: '#333333' } })).body.data;
    const aLead = (await api.rest('POST', '/backend/leads', { key: a.key, body: { name: 'A', phone: '+5511955554444' } })).body.data;
    await expect(api.db.prisma.leadTag.create({ data: { tenant_id: a.tenantId, lead_id: aLead.id, tag_id: bTag.id } })).rejects.toThrow();
  });
});

/** Which record an id names: by argument name (`lead_id`, `tag_ids`), or for a path's `:id` by the segment before it. */
const ENTITY: Record<string, string> = {
  lead: 'lead',
  leads: 'lead',
  tag: 'tag',
  tags: 'tag',
  status: 'status',
  'lead-statuses': 'status',
  lead_status: 'status',
  pipeline: 'pipeline',
  pipelines: 'pipeline',
  before_pipeline: 'pipeline2',
  group: 'group',
  groups: 'group',
  stage: 'stage',
  stages: 'stage',
  target_stage: 'stage',
  source: 'lead',
  deal: 'deal',
  deals: 'deal',
  activities: 'activity',
  product: 'product',
  products: 'product',
  user: 'user',
  users: 'user',
  owner: 'user',
  assignee: 'user',
  'api-keys': 'apiKey',
  uploads: 'upload',
  tenant: 'tenant',
  channel: 'channel',
  channels: 'channel',
  conversations: 'conversation',
  department: 'department',
  departments: 'department',
  webhooks: 'webhook',
  delivery: 'delivery',
  assistant: 'assistant',
  assistants: 'assistant',
  knowledge: 'knowledge',
  template: 'template',
  templates: 'template',
  cadence: 'cadence',
  cadences: 'cadence',
  'cadence-associations': 'association',
  message: 'message',
};

type World = Record<string, string> & { stages?: unknown };

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
  w.pipeline2 = (await makePipeline(api, org, { name: 'Outro', group_id: pipeline.group_id, new_group_name: undefined })).id;
  // A valid save of the pipeline: its own stages, unchanged.
  w.stages = pipeline.stages.map((st) => ({ id: st.id, name: st.name })) as never;
  w.deal = await post('/backend/pipeline/deals', { lead_id: w.lead, pipeline_id: pipeline.id, stage_id: pipeline.entrada });
  w.activity = await post(`/backend/pipeline/deals/${w.deal}/activities`, { title: 'a' });
  w.product = await post('/backend/pipeline/products', { name: 'p', price: 1 });
  w.department = await post('/backend/departments', { name: 'd' });
  w.channel = await post('/backend/channels', { name: 'c', provider: 'test' });
  const inbound = await post(`/backend/channels/${w.channel}/inbound`, { from: nextPhone(), content: 'oi' }, (b) => b.data);
  Object.assign(w, { conversation: inbound.conversation.id, message: inbound.message.id });
  w.webhook = await post('/backend/webhooks', { url: 'https://93.184.215.14/hook', events: ['lead.created'] });
  const event = await api.db.prisma.event.findFirstOrThrow({ where: { tenant_id: org.tenantId } });
  w.delivery = (
    await api.db.prisma.webhookDelivery.create({
      data: {
        tenant_id: org.tenantId,
        webhook_id: w.webhook,
        event_id: event.id,
        event_type: event.type,
        attempt: 1,
        status: 'failed',
        duration_ms: 1,
      },
    })
  ).id;
  w.assistant = await post('/backend/assistants', { name: 'a' });
  w.knowledge = await post('/backend/knowledge', { name: 'k', content: 'texto' });
  await post('/backend/templates/sync', { app_id: 'app', templates: [providerTemplate('t')] }, () => null);
  w.template = (await api.rest('GET', '/backend/templates', { key: org.key })).body[0].id;
  w.cadence = await post('/backend/cadences', { name: 'c', steps: [{ delay_seconds: 3_600 }] });
  w.association = await post('/backend/templates/cadence-associations', {
    cadence_id: w.cadence,
    template_id: w.template,
    step_index: 0,
    message_index: 0,
  });
  const upload = await api.rest('POST', '/backend/uploads', { key: org.key, body: uploadForm({ bytes: PNG, name: 'a.png' }) });
  w.upload = upload.body.id;
  return w;
}

/** Valid values for arguments that are not ids, so that only the id decides the answer. */
function valid(field: string, name: string, w: World): unknown {
  if (name === 'color') return /Stage|Pipeline/.test(field) ? '215 16% 47%' : '#654321';
  if (name === 'stages') return w.stages;
  if (field === 'reportMessageStatus' && name === 'status') return 'delivered';
  switch (name) {
    case 'q':
      return 'texto';
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
    default:
      return undefined;
  }
}

const entityOf = (name: string) => ENTITY[name.replace(/_ids?$/, '')];
const isId = (arg: GraphQLArgument) => getNamedType(arg.type).name === 'UUID';
const listOf = (arg: GraphQLArgument) => isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type);

/** The id slots of a REST operation: path parameters and UUID arguments of its body or query. */
function restSlots(op: RestOperation): { name: string; inPath: boolean; entity: string }[] {
  const slots = op.params.map((p) => {
    const before = op.compiled.fullPath.split('/').filter(Boolean);
    const at = before.indexOf(`:${p}`);
    return { name: p, inPath: true, entity: p === 'id' ? ENTITY[before[at - 1]] : entityOf(p) };
  });
  const inPath = new Set(op.params);
  for (const a of op.field?.args ?? [])
    if (isId(a) && !inPath.has(a.name)) slots.push({ name: a.name, inPath: false, entity: entityOf(a.name) });
  return slots;
}

describe('cross-organisation ids', () => {
  it('answers 404 to every operation given another organisation’s id, on REST and GraphQL, and changes nothing', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const [mine, theirs] = [await world(a), await world(b)];
    const before = [await fingerprint(api.db, a.tenantId), await fingerprint(api.db, b.tenantId)];
    const problems: string[] = [];
    let calls = 0;
    /**
     * B's id must be answered exactly as an id that exists nowhere: 404, or the refusal a route documents
     * for any id it cannot use (a stage outside the pipeline is 400, an unusable channel 502), or a read
     * filtered to nothing, or a per-item result that says of it what it says of the unknown id (a batch's
     * `not_found`). Never a success that shows or touches B's record.
     */
    type Answer = { status: number; code?: string; message?: string; text: string; id: string };
    const judge = (label: string, theirsId: string, withTheirs: Answer, withUnknown: Answer, read: boolean) => {
      if (withTheirs.status < 400) {
        const asUnknown = withTheirs.text.replaceAll(theirsId, '<id>') === withUnknown.text.replaceAll(withUnknown.id, '<id>');
        if (!asUnknown && (!read || withTheirs.text.includes(theirsId)))
          problems.push(`${label}: ${withTheirs.status} ${withTheirs.text.slice(0, 200)}`);
        return;
      }
      const documented = withTheirs.status === 404 || withTheirs.code === 'CHANNEL_ERROR' || /não pertence/.test(withTheirs.message ?? '');
      if (withTheirs.status !== withUnknown.status || withTheirs.code !== withUnknown.code || !documented) {
        problems.push(
          `${label}: ${withTheirs.status} ${withTheirs.code} ${withTheirs.message}; an unknown id: ${withUnknown.status} ${withUnknown.code}`,
        );
      }
    };

    for (const op of restOperations(schema)) {
      if (op.compiled.route.handler && !op.params.length) continue; // handler routes without ids (uploads, send-media) take no record
      const slots = restSlots(op);
      for (const slot of slots) {
        if (!slot.entity || !(slot.entity in theirs)) {
          problems.push(`${op.method} ${op.compiled.fullPath}: no fixture for ${slot.name}`);
          continue;
        }
        const call = async (value: string) => {
          const idOf = (name: string, entity: string | undefined) => (name === slot.name ? value : mine[entity!]);
          let url = fillPath(op, (p) => idOf(p, slots.find((s) => s.name === p)!.entity));
          let body = restBody(
            op,
            (name) => {
              const s = slots.find((x) => x.name === name && !x.inPath);
              if (!s) return valid(op.field?.name ?? '', name, mine);
              const id = idOf(name, s.entity);
              return listOf(op.field!.args.find((x) => x.name === name)!) ? [id] : id;
            },
            true,
          );
          if (op.method === 'GET' || op.method === 'DELETE') {
            const query = slots.filter((s) => !s.inPath).map((s) => `${s.name}=${idOf(s.name, s.entity)}`);
            for (const arg of op.field?.args ?? []) {
              const v = isId(arg) || op.params.includes(arg.name) ? undefined : valid(op.field!.name, arg.name, mine);
              if (typeof v === 'string') query.push(`${arg.name}=${encodeURIComponent(v)}`);
            }
            if (query.length) url += `?${query.join('&')}`;
            body = undefined;
          }
          const r = await api.rest(op.method, url, { key: a.key, body });
          calls++;
          return {
            status: r.status,
            code: r.body?.code ?? r.body?.error?.code,
            message: r.body?.message ?? r.body?.error?.message,
            text: JSON.stringify(r.body ?? null),
            id: value,
          };
        };
        const withTheirs = await call(theirs[slot.entity]);
        judge(
          `${op.method} ${op.compiled.fullPath} with B's ${slot.name}`,
          theirs[slot.entity],
          withTheirs,
          await call(crypto.randomUUID()),
          op.method === 'GET',
        );
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
        const call = async (value: string) => {
          const named = (_: string, arg: string) => {
            const x = op.field.args.find((y) => y.name === arg)!;
            if (!isId(x)) return valid(op.field.name, arg, mine);
            const id = arg === slot.name ? value : mine[(arg === 'id' ? entityOfField(op) : entityOf(arg))!];
            return listOf(x) ? [id] : id;
          };
          const r = await api.raw('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
            body: JSON.stringify(graphqlDocument([op], named, true)),
          });
          const json = await r.json();
          calls++;
          const error = json.errors?.[0]?.extensions;
          return {
            status: error?.status ?? 200,
            code: error?.code,
            message: json.errors?.[0]?.message,
            text: JSON.stringify(json.data ?? null),
            id: value,
          };
        };
        judge(
          `GraphQL ${op.key} with B's ${slot.name}`,
          theirs[entity],
          await call(theirs[entity]),
          await call(crypto.randomUUID()),
          op.root === 'Query',
        );
      }
    }

    expect(problems).toEqual([]);
    expect(calls).toBeGreaterThan(300);
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
