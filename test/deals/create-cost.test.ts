// What a creation costs: a deal for an existing lead is created in at most 6 SQL statements (the key
// lookup, the checks, the insert, the history with the card read back, the events with their jobs, and
// on PostgreSQL the COMMIT), on REST and GraphQL, and its answer is the REST read's, byte for byte.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, makeTag } from '../helpers/factories.js';

const api = useTestApp();

// 6 on both databases, counting the transaction's COMMIT where the counter sees it: PostgreSQL
// (FUNIL_LOG_SQL=1: key, checks, insert, history + card, the events with their jobs, COMMIT); PGlite's
// adapter ends a transaction outside the counter, so there it is one fewer.
const BOUND = 6;

describe('createDeal statements', () => {
  it('costs at most 6 statements (COMMIT included on PostgreSQL) on REST and GraphQL, tags included, and answers what GET reads', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const lead = await makeLead(api, org, { name: 'Custo' });
    const tag = await makeTag(api, org, 'custo');
    await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id }); // the key's last_used_at write, once

    let rest: any;
    const restCost = await api.countStatements(
      async () => (rest = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 12.5, note: 'n' })),
    );
    expect(rest.status).toBe(201);
    expect(restCost).toBeLessThanOrEqual(BOUND);
    const read = await api.raw(`/backend/pipeline/deals/${rest.body.id}`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(await read.text()).toBe(JSON.stringify(rest.body));

    const query = `mutation ($p: UUID!, $s: UUID!, $l: UUID!) { createDeal(pipeline_id: $p, stage_id: $s, lead_id: $l, value: 3) { id number total lead_name tags { name } } }`;
    let gql: any;
    const gqlCost = await api.countStatements(async () => {
      const response = await api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({ query, variables: { p: p.id, s: p.entrada, l: lead.id } }),
      });
      gql = await response.json();
    });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.createDeal).toMatchObject({ total: 3, lead_name: 'Custo', tags: [] });
    expect(gqlCost).toBeLessThanOrEqual(BOUND);

    // Tags checked in one more read; lines and tags are written by the deal's insert.
    let tagged: any;
    const taggedCost = await api.countStatements(
      async () =>
        (tagged = await createDeal(api, org, {
          pipeline_id: p.id,
          stage_id: p.entrada,
          lead_id: lead.id,
          tag_ids: [tag.id],
          products: [{ name: 'Linha', price: 2, qty: 2 }],
        })),
    );
    expect(tagged.status).toBe(201);
    expect(tagged.body).toMatchObject({
      total: 4,
      tags: [{ name: 'custo' }],
      products: [{ name: 'Linha', price: 2, qty: 2, total: 4, custom: true }],
    });
    expect(taggedCost).toBeLessThanOrEqual(BOUND + 1);
  });
});
