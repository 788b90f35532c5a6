// NODE_ENV=production: GraphQL does not suggest field names to strangers; bodies stay bounded.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp({ NODE_ENV: 'production' });

describe('production GraphQL', () => {
  it('gives no field suggestions', async () => {
    const org = await api.newOrg();
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: '{ tagz { id } }' }),
    });
    const body = await r.json();
    expect(body.errors[0].message).not.toMatch(/Did you mean/);
    expect(body.errors[0].message).toMatch(/tagz/);
  });

  it('refuses a streamed GraphQL body over 10 MB with 413', async () => {
    const org = await api.newOrg();
    const chunk = new Uint8Array(1024 * 1024).fill(32);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ >= 20) return c.close();
        c.enqueue(chunk);
      },
    });
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }] });
  });
});
