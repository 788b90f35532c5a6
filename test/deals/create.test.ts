// POST /backend/pipeline/deals: every create rule and error code, permissions, and numbering under
// concurrent creation.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import {
  createDeal,
  dealRequests,
  makeLead,
  makePipeline,
  makeProduct,
  makeStatus,
  makeTag,
  nextPhone,
  useOrgWithPipeline,
} from '../helpers/factories.js';

const api = useTestApp();

const { org, p, lead } = useOrgWithPipeline(api, { name: 'Ana', company: 'ACME' });
const { base } = dealRequests(api, { org, p, lead });

describe('create deal', () => {
  it('creates a deal with defaults, lead fields resolved from the lead and 201', async () => {
    const r = await createDeal(api, org, { ...base(), value: 150.5, note: 'primeiro contato' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: lead.id,
      owner_id: null,
      value: 150.5,
      total: 150.5,
      origin: 'manual',
      loss_reason: null,
      note: 'primeiro contato',
      won_at: null,
      lost_at: null,
      lead_name: 'Ana',
      lead_company: 'ACME',
      products: [],
      tags: [],
      pending_todos: 0,
      overdue_todos: 0,
    });
    expect(typeof r.body.number).toBe('number');
    const got = await api.rest('GET', `/backend/pipeline/deals/${r.body.id}`, { key: org.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it('reads contact data from the lead at read time, never a copy', async () => {
    const l = await makeLead(api, org, { name: 'Bruno' });
    const r = await createDeal(api, org, { ...base(), lead_id: l.id });
    await api.rest('PUT', `/backend/leads/${l.id}`, { key: org.key, body: { name: 'Bruno Silva', company: 'Nova', email: 'b@x.com' } });
    const got = await api.rest('GET', `/backend/pipeline/deals/${r.body.id}`, { key: org.key });
    expect(got.body).toMatchObject({ lead_name: 'Bruno Silva', lead_company: 'Nova', lead_email: 'b@x.com' });
  });

  it('keeps origin when given', async () => {
    const r = await createDeal(api, org, { ...base(), origin: 'whatsapp' });
    expect(r.body.origin).toBe('whatsapp');
  });

  it('creates the lead with new_lead in the same transaction', async () => {
    const phone = nextPhone();
    const r = await createDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      new_lead: { name: 'Carla', phone, email: 'c@x.com', company: 'Beta' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ lead_name: 'Carla', lead_phone: phone, lead_email: 'c@x.com', lead_company: 'Beta' });
    const leadRow = await api.rest('GET', `/backend/leads/${r.body.lead_id}`, { key: org.key });
    expect(leadRow.body.data.name).toBe('Carla');
  });

  it('rolls the new lead back when the deal is refused', async () => {
    const phone = nextPhone();
    const r = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.perdido, new_lead: { name: 'Dora', phone } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('ERR_INVALID_INPUT');
    const leads = await api.rest('GET', `/backend/leads?search=${encodeURIComponent(phone)}`, { key: org.key });
    expect(leads.body.data).toEqual([]);
  });

  it('refuses new_lead with an invalid phone (400) or a phone already used (409)', async () => {
    const bad = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, new_lead: { name: 'X', phone: '123' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('ERR_INVALID_INPUT');
    const phone = nextPhone();
    await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, new_lead: { name: 'Y', phone } });
    const dup = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, new_lead: { name: 'Z', phone } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ERR_CONFLICT');
  });

  it('refuses without lead_id or new_lead (400), and with both (400)', async () => {
    const none = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ code: 'ERR_INVALID_INPUT' });
    expect(typeof none.body.message).toBe('string');
    const both = await createDeal(api, org, { ...base(), new_lead: { name: 'W', phone: nextPhone() } });
    expect(both.status).toBe(400);
  });

  it('refuses a stage of another pipeline with 400 and an unknown pipeline with 404', async () => {
    const other = await makePipeline(api, org, 'Outro');
    const r = await createDeal(api, org, { ...base(), stage_id: other.entrada });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('ERR_INVALID_INPUT');
    const unknown = await createDeal(api, org, { ...base(), pipeline_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('ERR_NOT_FOUND');
  });

  it('refuses missing pipeline_id or stage_id and malformed uuids with 400', async () => {
    expect((await createDeal(api, org, { stage_id: p.entrada, lead_id: lead.id })).status).toBe(400);
    expect((await createDeal(api, org, { pipeline_id: p.id, lead_id: lead.id })).status).toBe(400);
    const bad = await createDeal(api, org, { ...base(), lead_id: 'not-a-uuid' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('ERR_INVALID_INPUT');
  });

  it('answers 404 for an unknown lead, tag, product, owner or status', async () => {
    const nope = '00000000-0000-4000-8000-000000000001';
    for (const extra of [
      { lead_id: nope },
      { tag_ids: [nope] },
      { products: [{ product_id: nope }] },
      { owner_id: nope },
      { lead_status_id: nope },
    ]) {
      const r = await createDeal(api, org, { ...base(), ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(404);
      expect(r.body.code).toBe('ERR_NOT_FOUND');
    }
  });

  it('treats ids of another organisation as unknown', async () => {
    const other = await api.newOrg('Other');
    const op = await makePipeline(api, other);
    const olead = await makeLead(api, other);
    const otag = await makeTag(api, other, 'alien');
    expect((await createDeal(api, org, { ...base(), lead_id: olead.id })).status).toBe(404);
    expect((await createDeal(api, org, { ...base(), tag_ids: [otag.id] })).status).toBe(404);
    expect((await createDeal(api, org, { ...base(), pipeline_id: op.id, stage_id: op.entrada })).status).toBe(404);
    expect((await createDeal(api, org, { ...base(), stage_id: op.entrada })).status).toBe(400);
  });

  it('requires loss_reason in the lost stage and records it; sets won_at in the won stage', async () => {
    const missing = await createDeal(api, org, { ...base(), stage_id: p.perdido });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('ERR_INVALID_INPUT');
    const blank = await createDeal(api, org, { ...base(), stage_id: p.perdido, loss_reason: '   ' });
    expect(blank.status).toBe(400);
    const lost = await createDeal(api, org, { ...base(), stage_id: p.perdido, loss_reason: 'Preço' });
    expect(lost.status).toBe(201);
    expect(lost.body).toMatchObject({ loss_reason: 'Preço', won_at: null });
    expect(lost.body.lost_at).toBeTruthy();
    const won = await createDeal(api, org, { ...base(), stage_id: p.ganho, loss_reason: 'ignored' });
    expect(won.body).toMatchObject({ loss_reason: null, lost_at: null });
    expect(won.body.won_at).toBeTruthy();
    const regular = await createDeal(api, org, { ...base(), stage_id: p.andamento, loss_reason: 'ignored' });
    expect(regular.body).toMatchObject({ loss_reason: null, lost_at: null, won_at: null });
  });

  it('applies lead_status_id to the lead', async () => {
    const status = await makeStatus(api, org);
    const l = await makeLead(api, org, { name: 'Status' });
    const r = await createDeal(api, org, { ...base(), lead_id: l.id, lead_status_id: status.id });
    expect(r.body.lead_status_id).toBe(status.id);
    const leadRow = await api.rest('GET', `/backend/leads/${l.id}`, { key: org.key });
    expect(leadRow.body.data.status.id).toBe(status.id);
  });

  it('copies catalog lines, accepts one-off lines, counts qty < 1 as 1 and totals Σ price × qty', async () => {
    const prod = await makeProduct(api, org, 'Plano Pro', 99.9);
    const r = await createDeal(api, org, {
      ...base(),
      value: 5000,
      products: [
        { product_id: prod.id, qty: 3, name: 'ignored', price: 1 },
        { name: 'Instalação', price: 250, custom: true, qty: 0 },
        { name: 'Brinde', price: 0, qty: -4 },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.body.products).toEqual([
      { id: expect.any(String), product_id: prod.id, name: 'Plano Pro', price: 99.9, qty: 3, custom: false, total: 299.7 },
      { id: expect.any(String), product_id: null, name: 'Instalação', price: 250, qty: 1, custom: true, total: 250 },
      { id: expect.any(String), product_id: null, name: 'Brinde', price: 0, qty: 1, custom: true, total: 0 },
    ]);
    expect(r.body.value).toBe(5000);
    expect(r.body.total).toBe(549.7);
  });

  it('requires a name on one-off lines and refuses negative prices and values', async () => {
    const noName = await createDeal(api, org, { ...base(), products: [{ price: 10, custom: true }] });
    expect(noName.status).toBe(400);
    expect(noName.body.code).toBe('ERR_INVALID_INPUT');
    const negPrice = await createDeal(api, org, { ...base(), products: [{ name: 'X', price: -1, custom: true }] });
    expect(negPrice.status).toBe(400);
    const negValue = await createDeal(api, org, { ...base(), value: -0.01 });
    expect(negValue.status).toBe(400);
    expect(negValue.body.code).toBe('ERR_INVALID_INPUT');
  });

  it('associates tags (duplicates once) and an owner', async () => {
    const a = await makeTag(api, org, 'a-tag');
    const b = await makeTag(api, org, 'b-tag');
    const r = await createDeal(api, org, { ...base(), tag_ids: [b.id, a.id, a.id], owner_id: org.userId });
    expect(r.status).toBe(201);
    expect(r.body.tags.map((t: { name: string }) => t.name)).toEqual(['a-tag', 'b-tag']);
    expect(r.body.owner_id).toBe(org.userId);
  });

  it('requires pipeline.deals.create: operators may create, a view-only key may not (403)', async () => {
    const operator = await api.keyFor(org, 'operator');
    expect((await createDeal(api, org, base(), operator)).status).toBe(201);
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    const r = await createDeal(api, org, base(), viewer);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ERR_FORBIDDEN');
    const noKey = await api.rest('POST', '/backend/pipeline/deals', { body: base() });
    expect(noKey.status).toBe(401);
    expect(noKey.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
  });

  it('numbers deals per organisation from 1', async () => {
    const fresh = await api.newOrg('Fresh');
    const fp = await makePipeline(api, fresh);
    const fl = await makeLead(api, fresh);
    const first = await createDeal(api, fresh, { pipeline_id: fp.id, stage_id: fp.entrada, lead_id: fl.id });
    const second = await createDeal(api, fresh, { pipeline_id: fp.id, stage_id: fp.entrada, lead_id: fl.id });
    expect([first.body.number, second.body.number]).toEqual([1, 2]);
  });

  it('gives 200 concurrent creations 200 distinct consecutive numbers', async () => {
    const fresh = await api.newOrg('Concurrent');
    const fp = await makePipeline(api, fresh);
    const fl = await makeLead(api, fresh);
    // A saturated database answers 503 with Retry-After (POOL_WAIT_MS on a loaded machine): the client
    // retries those, as it is told to; no other answer but 201 is allowed, and no number is lost or doubled.
    const create = async (): Promise<Awaited<ReturnType<typeof createDeal>>> => {
      for (;;) {
        const r = await createDeal(api, fresh, { pipeline_id: fp.id, stage_id: fp.entrada, lead_id: fl.id });
        if (r.status !== 503) return r;
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const results = await Promise.all(Array.from({ length: 200 }, create));
    expect(results.map((r) => r.status)).toEqual(Array(200).fill(201));
    const numbers = results.map((r) => r.body.number as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });
});
