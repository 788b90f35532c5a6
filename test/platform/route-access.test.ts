// The access matrix, generated from the route table and the schema: every REST operation and every
// GraphQL root field, called with a key narrowed to each single permission (and with full keys of each
// role), is refused with 403 exactly when its declaration does not allow that key, and nothing changes
// on a refusal. A route or root field without a declaration cannot start (schema.test.ts).
import { randomUUID } from 'node:crypto';
import { parse, subscribe } from 'graphql';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import { allPermissions, rolePermissions } from '../../src/auth/permissions.js';
import { createContext } from '../../src/context/context.js';
import { schema } from '../../src/domains/index.js';
import { accessOfField } from '../../src/auth/access.js';
import { useTestApp } from '../helpers/app.js';
import {
  allows,
  fillPath,
  fingerprint,
  graphqlDocument,
  graphqlOperations,
  restBody,
  restOperations,
  takesFile,
  type GraphqlOperation,
} from '../helpers/operations.js';

// Thousands of calls from one organisation's keys a minute: the organisation's rate limit is not what this measures.
const api = useTestApp({ RATE_LIMIT_PER_ORGANISATION_PER_MINUTE: '0' });

interface Key {
  label: string;
  key: string;
  role: 'owner' | 'admin' | 'operator';
  permissions: ReadonlySet<string>;
  narrowed: boolean;
}

async function keys(org: Awaited<ReturnType<typeof api.newOrg>>): Promise<Key[]> {
  const out: Key[] = [];
  // Owner users, so that the narrowing alone decides.
  for (const p of allPermissions())
    out.push({ label: `[${p}]`, key: await api.keyFor(org, 'owner', [p]), role: 'owner', permissions: new Set([p]), narrowed: true });
  for (const role of ['admin', 'operator'] as const) {
    out.push({ label: `${role} full key`, key: await api.keyFor(org, role), role, permissions: rolePermissions(role), narrowed: false });
  }
  // Every permission of the role, listed: still a narrowed key, which may not manage users and keys.
  const adminAll = [...rolePermissions('admin')];
  out.push({
    label: 'admin key listing all',
    key: await api.keyFor(org, 'admin', adminAll),
    role: 'admin',
    permissions: new Set(adminAll),
    narrowed: true,
  });
  return out;
}

/** A GraphQL request: its per-root-field error codes by response key. */
async function graphql(key: string, body: { query: string; variables: Record<string, unknown> } | FormData) {
  const form = body instanceof FormData;
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(form ? {} : { 'content-type': 'application/json' }) },
    body: form ? body : JSON.stringify(body),
  });
  const json = await r.json();
  const codes = new Map<string, string>();
  for (const e of json.errors ?? []) codes.set(String(e.path?.[0] ?? '(request)'), e.extensions?.code);
  return { status: r.status, codes };
}

/** A multipart GraphQL request for a field that takes a file: a small text file in every File argument. */
function fileForm(op: GraphqlOperation) {
  const files = op.field.args.filter((a) => String(a.type).replace('!', '') === 'File').map((a) => a.name);
  const { query, variables } = graphqlDocument([op], (_, arg) => (files.includes(arg) ? null : undefined), true);
  const form = new FormData();
  form.append('operations', JSON.stringify({ query, variables }));
  form.append('map', JSON.stringify(Object.fromEntries(files.map((f, i) => [String(i), [`variables.${op.field.name}_${f}`]]))));
  files.forEach((_, i) => form.append(String(i), new Blob(['hello']), 'a.txt'));
  return form;
}

/** A REST call without the OpenAPI answer check (thousands of them; openapi.test.ts checks the shapes). */
async function rest(method: string, path: string, key: string, body: unknown) {
  const r = await api.raw(path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

/** Runs `tasks` with a few at a time (the PostgreSQL pool serves them in parallel; PGlite in turn). */
async function inParallel(tasks: (() => Promise<void>)[], width = 8) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}

/** One root field per request: a failed non-null root field would stop a mutation document's later fields. */
const callField = (k: Key, op: GraphqlOperation) => graphql(k.key, takesFile(op.field) ? fileForm(op) : graphqlDocument([op]));

describe('access matrix', () => {
  it('refuses every operation to exactly the keys its declaration does not allow, on REST and GraphQL, changing nothing', async () => {
    const org = await api.newOrg();
    const testKeys = await keys(org);
    const routes = restOperations(schema);
    const fields = graphqlOperations(schema);
    expect(routes.length).toBeGreaterThan(100);
    expect(fields.length).toBeGreaterThan(100);
    const before = await fingerprint(api.db, org.tenantId);

    // Refusals first: all of them, then the organisation's rows are compared.
    const problems: string[] = [];
    const refusals: (() => Promise<void>)[] = [];
    for (const k of testKeys) {
      for (const op of routes.filter((o) => !allows(o.access, k))) {
        refusals.push(async () => {
          const r = await rest(
            op.method,
            fillPath(op, () => crypto.randomUUID()),
            k.key,
            restBody(op),
          );
          const code = op.compiled.route.style === 'bare' ? r.body?.code : r.body?.error?.code;
          const expected = op.compiled.route.style === 'bare' ? 'ERR_FORBIDDEN' : 'FORBIDDEN';
          if (r.status !== 403 || code !== expected)
            problems.push(`${k.label} ${op.method} ${op.compiled.fullPath}: ${r.status} ${JSON.stringify(r.body)}`);
        });
      }
      for (const op of fields.filter((o) => !allows(o.access, k))) {
        refusals.push(async () => {
          const { codes } = await callField(k, op);
          if (codes.get(op.field.name) !== 'FORBIDDEN')
            problems.push(`${k.label} GraphQL ${op.key}: ${codes.get(op.field.name) ?? codes.get('(request)') ?? 'no error'}`);
        });
      }
    }
    await inParallel(refusals);
    expect(problems).toEqual([]);
    const refused = refusals.length;
    expect(refused).toBeGreaterThan(2000);
    expect(await fingerprint(api.db, org.tenantId)).toEqual(before);

    // Then every allowed pair gets past the check (its answer may be any other status: the ids are random).
    const passes: (() => Promise<void>)[] = [];
    for (const k of testKeys) {
      for (const op of routes.filter((o) => allows(o.access, k))) {
        passes.push(async () => {
          const r = await rest(
            op.method,
            fillPath(op, () => crypto.randomUUID()),
            k.key,
            restBody(op),
          );
          if (r.status === 403 || r.status === 401)
            problems.push(`${k.label} ${op.method} ${op.compiled.fullPath}: ${r.status} ${JSON.stringify(r.body)}`);
        });
      }
      for (const op of fields.filter((o) => allows(o.access, k))) {
        passes.push(async () => {
          const { codes } = await callField(k, op);
          const code = codes.get(op.field.name) ?? codes.get('(request)');
          if (code === 'FORBIDDEN' || code === 'UNAUTHORIZED') problems.push(`${k.label} GraphQL ${op.key}: ${code}`);
        });
      }
    }
    await inParallel(passes);
    expect(problems).toEqual([]);
    // Hundreds of requests: on embedded PGlite with both suites running it has taken over a minute.
  }, 240_000);

  it('guards subscriptions by their declaration too', async () => {
    const org = await api.newOrg();
    const start = async (key: string, document: string) => {
      const viewer = await authenticate(api.db.prisma, `Bearer ${key}`);
      const variables = { id: randomUUID() };
      return subscribe({
        schema,
        document: parse(document),
        variableValues: variables,
        contextValue: createContext(api.app.deps, { viewer, requestId: 't' }),
      });
    };
    const subscriptions = Object.values(schema.getSubscriptionType()!.getFields());
    expect(subscriptions.map((f) => f.name).sort()).toEqual(['conversationUpdated', 'dealChanged', 'messageAdded']);
    for (const field of subscriptions) {
      const access = accessOfField(schema, 'Subscription', field.name) as string;
      const args = field.args.map((a) => `${a.name}: $id`).join(', ');
      const document = `subscription${field.args.length ? '($id: UUID!)' : ''} { ${field.name}${args ? `(${args})` : ''} { __typename } }`;
      const refused = (await start(await api.keyFor(org, 'owner', ['leads.view']), document)) as {
        errors?: { originalError?: { kind?: string } }[];
      };
      expect(refused.errors?.[0].originalError?.kind, field.name).toBe('FORBIDDEN');
      // With its permission alone it is not refused for access (an unknown pipeline is NOT_FOUND).
      const allowed = (await start(await api.keyFor(org, 'operator', [access]), document)) as AsyncGenerator & {
        errors?: { originalError?: { kind?: string } }[];
      };
      expect(allowed.errors?.[0].originalError?.kind ?? 'streaming', field.name).not.toMatch(/FORBIDDEN|UNAUTHORIZED/);
      await allowed.return?.(undefined);
    }
  });
});
