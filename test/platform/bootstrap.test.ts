// The first start against an empty database: organisation "Default" with exactly BOOTSTRAP_API_KEY.
import { describe, expect, it } from 'vitest';
import { bootstrapOrganisation } from '../../src/domains/accounts/service.js';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp();

describe('bootstrap', () => {
  it('creates "Default" with the configured key on an empty database, and never again', async () => {
    const key = 'my-chosen-bootstrap-key-123';
    const created = await bootstrapOrganisation(api.db.prisma, key);
    expect(created?.tenant.name).toBe('Default');
    expect(created?.generated).toBe(false);
    const r = await api.rest('GET', '/backend/users', { key });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([expect.objectContaining({ role: 'owner' })]);
    expect(await bootstrapOrganisation(api.db.prisma, key)).toBeNull();
    expect(await api.db.prisma.tenant.count()).toBe(1);
  });
});
