// The statement counts the suite's cost tests rely on (api.countStatements, db/statements.ts) measure the
// work they are given and nothing else the process does: test files share their process (isolate:
// false), and another app's poll or job running beside a measured request once doubled its count (5 →
// 10) on a loaded CI machine.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp();

describe('counting statements', () => {
  it('counts a request’s own statements while other requests run beside it', async () => {
    const org = await api.newOrg('Contagem');
    const other = await api.newOrg('Vizinha');
    const page = () => api.rest('GET', '/backend/leads?limit=5', { key: org.key });
    await page(); // the first request of a key costs one statement more (its lookup is remembered after)
    const alone = await api.countStatements(page);
    expect(alone).toBeGreaterThan(0);

    let running = true;
    let besideRequests = 0;
    const beside = (async () => {
      while (running) {
        await api.rest('GET', '/backend/tags', { key: other.key });
        besideRequests++;
      }
    })();
    try {
      const counts: number[] = [];
      // Each measured request waits for one of the other organisation's to finish meanwhile.
      for (let i = 0; i < 5; i++) {
        const before = besideRequests;
        counts.push(
          await api.countStatements(async () => {
            await page();
            while (besideRequests === before) await new Promise((resolve) => setTimeout(resolve, 5));
          }),
        );
      }
      expect(counts).toEqual(Array(5).fill(alone));
    } finally {
      running = false;
      await beside;
    }
  });
});
