// GET /backend/leads?search=…: `%`, `_` and `\` are literal characters (decisions.md "Input rules that
// hold on every route"), in the name, company, email and phone a search looks at.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { nextPhone } from '../helpers/factories.js';

const api = useTestApp();

describe('lead search', () => {
  it('treats %, _ and \\ literally', async () => {
    const org = await api.newOrg();
    const leads: Record<string, string>[] = [
      { name: '50% off' },
      { name: '500 off' },
      { name: 'Ana', company: 'a_b Ltda' },
      { name: 'Bia', company: 'axb Ltda' },
      { name: 'back\\slash' },
      { name: 'backslash' },
      { name: 'Caio', email: 'x_y@example.com' },
      { name: 'Davi', email: 'xzy@example.com' },
    ];
    for (const lead of leads) {
      const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { phone: nextPhone(), ...lead } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const found = async (search: string) => {
      const r = await api.rest('GET', `/backend/leads?search=${encodeURIComponent(search)}`, { key: org.key });
      expect(r.status).toBe(200);
      expect(r.body.pagination.total).toBe(r.body.data.length);
      return r.body.data.map((l: any) => l.name).sort();
    };
    expect(await found('50%')).toEqual(['50% off']);
    expect(await found('%')).toEqual(['50% off']);
    expect(await found('a_b')).toEqual(['Ana']);
    expect(await found('x_y')).toEqual(['Caio']);
    expect(await found('_')).toEqual(['Ana', 'Caio']);
    expect(await found('back\\slash')).toEqual(['back\\slash']);
    expect(await found('\\')).toEqual(['back\\slash']);
    expect(await found('OFF')).toEqual(['50% off', '500 off']); // still a case-insensitive substring
  });
});
