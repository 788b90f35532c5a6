// Shared by the messaging tests: users with their keys, departments, channels and inbound messages,
// all made through the API.
import { expect } from 'vitest';
import type { Org, TestClient } from '../helpers/app.js';

export interface UserWithKey {
  id: string;
  key: string;
}

let users = 0;

/** A new user of `org` with this role and a full key for it. */
export async function makeUser(api: TestClient, org: Org, role: 'owner' | 'admin' | 'operator'): Promise<UserWithKey> {
  const user = await api.rest('POST', '/backend/users', {
    key: org.key,
    body: { name: `${role} ${++users}`, email: `${role}-${users}-${Math.random().toString(36).slice(2)}@example.com`, role },
  });
  expect(user.status, JSON.stringify(user.body)).toBe(201);
  const key = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: role, user_id: user.body.data.id } });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  return { id: user.body.data.id, key: key.body.data.key };
}

export async function makeDepartment(api: TestClient, org: Org, name: string) {
  const r = await api.rest('POST', '/backend/departments', { key: org.key, body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string };
}

export async function addMember(api: TestClient, org: Org, departmentId: string, userId: string) {
  const r = await api.rest('POST', `/backend/departments/${departmentId}/members`, { key: org.key, body: { user_id: userId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

export async function makeChannel(api: TestClient, org: Org, body: Record<string, unknown> = {}) {
  const r = await api.rest('POST', '/backend/channels', { key: org.key, body: { name: 'Canal', provider: 'test', ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data as { id: string; name: string; provider: string; department_id: string | null; active: boolean };
}

let phones = 5511988000000;

/** A Brazilian mobile number no other test of this file used (valid for libphonenumber-js). */
export function nextMobile(): string {
  return `+${phones++}`;
}

/** An inbound message from `from` on a channel; returns {lead, conversation, message}. */
export async function inbound(api: TestClient, org: Org, channelId: string, from: string, content = 'Olá', name?: string) {
  const r = await api.rest('POST', `/backend/channels/${channelId}/inbound`, {
    key: org.key,
    body: { from, content, ...(name ? { name } : {}) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as {
    lead: { id: string; name: string; phone: string };
    conversation: { id: string; unread_count: number; department_id: string | null };
    message: { id: string };
  };
}

/** Sends a message through the API, asserting 200; returns the stored message. */
export async function send(api: TestClient, key: string, body: Record<string, unknown>) {
  const r = await api.rest('POST', '/backend/messages/send', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { id: string; status: string; conversation_id: string; channel_id: string; lead_id: string };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls a message's row until `done` holds for it (or the time is up). */
export async function waitForMessage(
  api: TestClient,
  id: string,
  done: (m: MessageRow) => boolean,
  timeoutMs = 10_000,
): Promise<MessageRow> {
  const started = Date.now();
  for (;;) {
    const [row] = await api.db.sql.query<MessageRow>(
      'SELECT id::text AS id, status::text AS status, provider_message_id, error FROM messages WHERE id = $1',
      [id],
    );
    if (row && done(row)) return row;
    if (Date.now() - started > timeoutMs) throw new Error(`message ${id} still ${JSON.stringify(row)}`);
    await sleep(50);
  }
}

export interface MessageRow {
  id: string;
  status: string;
  provider_message_id: string | null;
  error: string | null;
}

export async function eventTypes(api: TestClient, tenantId: string): Promise<string[]> {
  return (
    await api.db.sql.query<{ type: string }>('SELECT type FROM events WHERE tenant_id = $1 ORDER BY created_at, type', [tenantId])
  ).map((e) => e.type);
}
