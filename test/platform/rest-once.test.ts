// A REST field route runs its operation once (rest/handler.ts, rest/sofa.ts): graphql-js executes the
// route's document one time per request, errors included, and sofa's router is never built or asked.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeLead } from '../helpers/factories.js';

const executions = vi.hoisted(() => ({ count: 0 }));

vi.mock('graphql', async (importOriginal) => {
  const graphql = await importOriginal<typeof import('graphql')>();
  return {
    ...graphql,
    execute: (...args: Parameters<typeof graphql.execute>) => {
      executions.count++;
      return graphql.execute(...args);
    },
  };
});

vi.mock('sofa-api', async (importOriginal) => {
  const sofa = await importOriginal<typeof import('sofa-api')>();
  const refuse = () => {
    throw new Error("sofa's router is not used");
  };
  return { ...sofa, useSofa: refuse, createSofaRouter: refuse };
});

const api = useTestApp();

describe('a REST field route', () => {
  beforeEach(() => {
    executions.count = 0;
  });

  it('executes its operation once, for an answer and for an error', async () => {
    const org = await api.newOrg();
    const lead = await makeLead(api, org, { name: 'Once' });

    executions.count = 0;
    const one = await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key });
    expect(one.status).toBe(200);
    expect(one.body.data.name).toBe('Once');
    expect(executions.count).toBe(1);

    executions.count = 0;
    const missing = await api.rest('GET', '/backend/leads/00000000-0000-4000-8000-000000000000', { key: org.key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    expect(executions.count).toBe(1);

    executions.count = 0;
    const list = await api.rest('GET', '/backend/leads', { key: org.key });
    expect(list.status).toBe(200);
    expect(executions.count).toBe(1);
  });

  it('refuses a path parameter that is not a UUID before executing, as sofa does', async () => {
    const org = await api.newOrg();
    executions.count = 0;
    const bad = await api.rest('GET', '/backend/leads/abc', { key: org.key });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'Entrada inválida: Value is not a valid UUID: abc' },
    });
    expect(executions.count).toBe(0);
  });
});
