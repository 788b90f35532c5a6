import { describe, expect, it } from 'vitest';
import { useTestApp } from './helpers/app.js';

const api = useTestApp();

describe('smoke', () => {
  it('creates a lead through REST', async () => {
    const org = await api.newOrg();
    const tag = await api.rest('POST', '/backend/tags', { key: org.key, body: { name: 'vip', color: '#ff0000' } });
    console.log(tag.status, JSON.stringify(tag.body));
    const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana', phone: '+5511999998888', tag_ids: [tag.body.data.id], custom_fields: { a: 1 } } });
    console.log(r.status, JSON.stringify(r.body));
    const list = await api.rest('GET', '/backend/leads?limit=5', { key: org.key });
    console.log(list.status, JSON.stringify(list.body));
    const bad = await api.rest('GET', '/backend/leads/xyz', { key: org.key });
    console.log(bad.status, JSON.stringify(bad.body));
    const nokey = await api.rest('GET', '/backend/leads');
    console.log(nokey.status, JSON.stringify(nokey.body));
    const unknown = await api.rest('GET', '/backend/pipelines/x/zzz', { key: org.key });
    console.log(unknown.status, JSON.stringify(unknown.body));
    const g = await api.raw('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` }, body: JSON.stringify({ query: '{ leads { data { id name tags { name } status { name } } pagination { total } } }' }) });
    console.log(g.status, await g.text());
    const oa = await api.raw('/backend/openapi.json');
    console.log(oa.status, Object.keys((await oa.json()).paths));
    expect(r.status).toBe(200);
  });
});
