// "Replace the whole list" writes serialise per record (decisions.md "Input rules that hold on every
// route"): concurrent PUTs with different lists leave exactly one writer's list, whole, and the deal's
// total matches its stored lines. Unserialised, PostgreSQL merged the lists (READ COMMITTED: each
// transaction deletes only the lines it saw, then inserts its own).
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeDeal, makeTag, useOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();
const { org, p, lead } = useOrgWithPipeline(api);

const WRITERS = 5;
const ROUNDS = 20;

/** Writer w's list; each writer's differs in names, prices, quantities and length. */
const writerLines = (w: number) =>
  Array.from({ length: w + 1 }, (_, j) => ({ name: `w${w}-${j}`, price: 10 * (w + 1) + j + 0.25, qty: j + 1, custom: true }));

describe('concurrent replacements of a list', () => {
  it(`deal products: ${WRITERS} writers × ${ROUNDS} rounds, one writer's lines whole, total = Σ price × qty`, async () => {
    const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 1 });
    const lists = Array.from({ length: WRITERS }, (_, w) => writerLines(w));
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        lists.map((products) => api.rest('PUT', `/backend/pipeline/deals/${deal.id}`, { key: org.key, body: { products } })),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const lines = await api.db.prisma.dealProduct.findMany({ where: { deal_id: deal.id }, orderBy: { position: 'asc' } });
      const stored = lines.map((l) => ({ name: l.name, price: Number(l.price), qty: l.qty, custom: l.custom }));
      expect(lists, `round ${round}: ${JSON.stringify(stored)}`).toContainEqual(stored);
      const { total } = await api.db.prisma.deal.findFirstOrThrow({ where: { id: deal.id } });
      const sum = stored.reduce((s, l) => s + Math.round(l.price * 100) * l.qty, 0) / 100;
      expect(Number(total), `round ${round}`).toBe(sum);
    }
  });

  it(`deal products: each of ${WRITERS} concurrent answers carries its own lines and their total`, async () => {
    const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 1 });
    const lists = Array.from({ length: WRITERS }, (_, w) => writerLines(w));
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        lists.map((products) => api.rest('PUT', `/backend/pipeline/deals/${deal.id}`, { key: org.key, body: { products } })),
      );
      answers.forEach((a, w) => {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        const own = a.body.products.map((l: any) => ({ name: l.name, price: l.price, qty: l.qty, custom: l.custom }));
        expect(own, `round ${round}, writer ${w}`).toEqual(lists[w]);
        const sum = lists[w].reduce((s, l) => s + Math.round(l.price * 100) * l.qty, 0) / 100;
        expect(a.body.total, `round ${round}, writer ${w}`).toBe(sum);
      });
    }
  });

  it(`deal moves beside line edits: each of ${WRITERS} concurrent answers carries its own write, its total matching its lines`, async () => {
    const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 1 });
    // Writers 0–2 replace the lines, writers 3 and 4 move the deal (each to its own stage).
    const targets = [p.andamento, p.entrada];
    const sumOf = (lines: { price: number; qty: number }[]) => lines.reduce((s, l) => s + Math.round(l.price * 100) * l.qty, 0) / 100;
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from({ length: WRITERS }, (_, w) =>
          w < 3
            ? api.rest('PUT', `/backend/pipeline/deals/${deal.id}`, { key: org.key, body: { products: writerLines(w) } })
            : api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: targets[w - 3] } }),
        ),
      );
      answers.forEach((a, w) => {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        const lines = a.body.products.map((l: any) => ({ name: l.name, price: l.price, qty: l.qty, custom: l.custom }));
        if (w < 3) expect(lines, `round ${round}, writer ${w}`).toEqual(writerLines(w));
        else expect(a.body.stage_id, `round ${round}, writer ${w}`).toBe(targets[w - 3]);
        // Its derived value matches the lines it answers with, whoever wrote them before it.
        expect(a.body.total, `round ${round}, writer ${w}`).toBe(lines.length ? sumOf(lines) : 1);
      });
    }
  });

  it(`deal creations: each of ${WRITERS} concurrent answers carries its own lines, tags and total`, async () => {
    const tags: { id: string }[] = [];
    for (let i = 0; i < WRITERS; i++) tags.push(await makeTag(api, org, `criado${i}`));
    const answers = await Promise.all(
      tags.map((t, w) =>
        api.rest('POST', '/backend/pipeline/deals', {
          key: org.key,
          body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, products: writerLines(w), tag_ids: [t.id] },
        }),
      ),
    );
    answers.forEach((a, w) => {
      expect(a.status, JSON.stringify(a.body)).toBe(201);
      expect(a.body.products.map((l: any) => ({ name: l.name, price: l.price, qty: l.qty, custom: l.custom }))).toEqual(writerLines(w));
      expect(a.body.tags.map((t: any) => t.id)).toEqual([tags[w].id]);
      expect(a.body.total).toBe(writerLines(w).reduce((s, l) => s + Math.round(l.price * 100) * l.qty, 0) / 100);
    });
  });

  it(`lead tag_ids: each of ${WRITERS} concurrent answers carries its own tags`, async () => {
    const tags: { id: string; name: string }[] = [];
    for (let i = 0; i < WRITERS; i++) tags.push(await makeTag(api, org, `own${i}`));
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        tags.map((t) => api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { tag_ids: [t.id] } })),
      );
      answers.forEach((a, w) => {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        expect(
          a.body.data.tags.map((t: any) => t.id),
          `round ${round}, writer ${w}`,
        ).toEqual([tags[w].id]);
      });
    }
  });

  it(`lead tag_ids: ${WRITERS} writers × ${ROUNDS} rounds, one writer's tags whole`, async () => {
    const tags: string[] = [];
    for (let i = 0; i < (WRITERS * (WRITERS + 1)) / 2; i++) tags.push((await makeTag(api, org, `t${i}`)).id);
    // Writer w sets w + 1 tags of its own.
    const lists = Array.from({ length: WRITERS }, (_, w) => tags.slice((w * (w + 1)) / 2, ((w + 1) * (w + 2)) / 2));
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        lists.map((tag_ids) => api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { tag_ids } })),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const stored = (await api.db.prisma.leadTag.findMany({ where: { lead_id: lead.id } })).map((t) => t.tag_id).sort();
      expect(
        lists.map((l) => [...l].sort()),
        `round ${round}`,
      ).toContainEqual(stored);
    }
  });

  it(`pipeline stages: ${WRITERS} writers × ${ROUNDS} rounds, one writer's stage list whole, in its order`, async () => {
    const base = [p.entrada, p.andamento, p.ganho, p.perdido];
    // Writer w renames the four stages, rotates their order by w and adds w new stages.
    const lists = Array.from({ length: WRITERS }, (_, w) => [
      ...base.map((_, i) => ({ id: base[(i + w) % 4], name: `s${(i + w) % 4} w${w}` })),
      ...Array.from({ length: w }, (_, j) => ({ name: `nova w${w}.${j}` })),
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        lists.map((stages) => api.rest('PUT', `/backend/pipelines/${p.id}`, { key: org.key, body: { name: 'Vendas', stages } })),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const stored = await api.db.prisma.stage.findMany({ where: { pipeline_id: p.id }, orderBy: { position: 'asc' } });
      expect(stored.map((s) => s.position)).toEqual(stored.map((_, i) => i));
      expect(
        lists.map((l) => l.map((s) => s.name)),
        `round ${round}`,
      ).toContainEqual(stored.map((s) => s.name));
    }
  });
});
