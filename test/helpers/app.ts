// One app per test file, driven in-process through its fetch handler: the same code path as the Node
// server, without a socket. Clients for REST and GraphQL, and organisation factories.
import { afterAll, beforeAll } from 'vitest';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import { countStatementsOf } from '../../src/db/statements.js';
import { openTestDatabase } from './database.js';
import { OpenApiCheck } from './openapi-check.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
const BASE = 'http://funil.test';

export interface RestResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Org {
  tenantId: string;
  userId: string;
  key: string;
}

export class TestClient {
  private openApi?: Promise<OpenApiCheck>;

  constructor(
    readonly app: App,
    readonly db: Database,
    readonly config: Config,
  ) {}

  async raw(path: string, init: RequestInit = {}): Promise<Response> {
    return this.app.fetch(new Request(BASE + path, init));
  }

  /** A REST call: JSON body unless `body` is FormData. The answer must match the OpenAPI document. */
  async rest<T = any>(
    method: string,
    path: string,
    options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<RestResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: BodyInit | undefined;
    if (options.body instanceof FormData) body = options.body;
    else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await this.raw(path, { method, headers, body });
    const text = await response.text();
    const result = { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    (await this.documentedAnswers()).check(method.toUpperCase(), new URL(BASE + path).pathname, result.status, result.body);
    return result;
  }

  /** The checker of REST answers against the live OpenAPI document, fetched once. */
  private documentedAnswers(): Promise<OpenApiCheck> {
    this.openApi ??= this.raw('/backend/openapi.json').then(async (r) => new OpenApiCheck(await r.json()));
    return this.openApi;
  }

  /** A GraphQL call with a typed document from codegen (test/gql). */
  async gql<R, V>(document: TypedDocumentNode<R, V>, variables: V, key: string): Promise<{ status: number; data?: R; errors?: any[] }> {
    const response = await this.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: print(document), variables }),
    });
    return { status: response.status, ...(await response.json()) };
  }

  /** A new organisation with its Owner key, through the platform admin endpoint. */
  async newOrg(name = 'Org'): Promise<Org> {
    const r = await this.rest('POST', '/backend/admin/tenants', { key: ADMIN_TOKEN, body: { name } });
    if (r.status !== 201) throw new Error(`newOrg failed: ${r.status} ${JSON.stringify(r.body)}`);
    return { tenantId: r.body.tenant.id, userId: r.body.user.id, key: r.body.api_key };
  }

  /** A key for a new user of `org` with this role, optionally narrowed to `permissions`. */
  async keyFor(org: Org, role: 'owner' | 'admin' | 'operator', permissions?: string[]): Promise<string> {
    const user = await this.rest('POST', '/backend/users', {
      key: org.key,
      body: { name: `${role} user`, email: `${role}-${Math.random().toString(36).slice(2)}@example.com`, role },
    });
    if (user.status !== 201) throw new Error(`keyFor user failed: ${JSON.stringify(user.body)}`);
    const key = await this.rest('POST', '/backend/api-keys', {
      key: org.key,
      body: { name: role, user_id: user.body.data.id, permissions },
    });
    if (key.status !== 201) throw new Error(`keyFor key failed: ${JSON.stringify(key.body)}`);
    return key.body.data.key;
  }

  /** The statements `fn` runs (not those of other work in the process: other files' apps share it). */
  async countStatements(fn: () => Promise<unknown>): Promise<number> {
    return countStatementsOf(fn);
  }
}

/**
 * Registers beforeAll/afterAll for a file-wide app and returns a handle filled in before the tests run.
 * `env` may be a function, read in beforeAll (after the hooks registered before, e.g. a bucket's start).
 */
export function useTestApp(env: Record<string, string> | (() => Record<string, string>) = {}): TestClient {
  const handle = {} as { client: TestClient; db: Database };
  beforeAll(async () => {
    const db = await openTestDatabase();
    const config = loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, PUBLIC_BASE_URL: BASE, ...(typeof env === 'function' ? env() : env) });
    handle.db = db;
    handle.client = new TestClient(createApp(config, db), db, config);
  });
  afterAll(async () => {
    await handle.db?.close();
  });
  return new Proxy({} as TestClient, {
    get(_, prop) {
      const value = (handle.client as any)[prop];
      return typeof value === 'function' ? value.bind(handle.client) : value;
    },
  });
}
