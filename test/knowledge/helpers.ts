// Knowledge test helpers: assistants and items made through the REST API, multipart bodies, and a
// snapshot of an organisation's knowledge rows for "nothing changed" assertions.
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import type { Org, TestClient } from '../helpers/app.js';

export const ERR = (code: string) => ({ code, message: expect.any(String) });
/** A 400 that names what was wrong (decisions.md: `details: [{field, message}]`). */
export const INVALID_FIELD = {
  ...ERR('ERR_INVALID_INPUT'),
  details: [expect.objectContaining({ field: expect.any(String), message: expect.any(String) })],
};

export async function makeAssistant(api: TestClient, org: Org, name = 'Atendente'): Promise<{ id: string; name: string }> {
  const r = await api.rest('POST', '/backend/assistants', { key: org.key, body: { name } });
  expect(r.status, `assistant: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

export async function makeItem(api: TestClient, org: Org, body: Record<string, unknown> = {}): Promise<any> {
  const r = await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'Item', content: 'Texto', ...body } });
  expect(r.status, `item: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

/** A multipart body with text fields and, optionally, files as [field, name, content]. */
export function form(fields: Record<string, string>, ...files: [string, string, BlobPart][]): FormData {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.set(k, v);
  for (const [field, name, content] of files) body.set(field, new File([content], name));
  return body;
}

/** Every knowledge row of an organisation, for "nothing changed" checks. */
export async function knowledgeRows(api: TestClient, tenantId: string) {
  const p = api.db.prisma;
  const where = { tenant_id: tenantId };
  return {
    assistants: await p.assistant.findMany({ where, orderBy: { id: 'asc' } }),
    items: await p.knowledgeItem.findMany({ where, orderBy: { id: 'asc' } }),
    exclusions: await p.knowledgeExclusion.findMany({ where, orderBy: [{ item_id: 'asc' }, { assistant_id: 'asc' }] }),
  };
}

/** An extraction process's command line: child/main.mjs as it is, or its bundle (child-bundle.mjs). */
export const EXTRACTION_SCRIPT = /(extract\/child|\.cache\/funil-extract\/[^/\0]+)\/main\.mjs/;

/**
 * The extraction processes among this process's children (a test's in-process server), or another
 * server's: not its other children (tsx's esbuild service, the bundle's build).
 */
export function extractionProcessesOf(parent = process.pid): number[] {
  return spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((line) => EXTRACTION_SCRIPT.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}
