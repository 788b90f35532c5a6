// Every route refuses a caller without the access its manifest declares (403 in the route's style),
// before looking at the data: the declared access and the services' checks must agree.
import { randomUUID } from 'node:crypto';
import { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, type GraphQLInputType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { domains, schema } from '../../src/domains/index.js';
import { allPermissions } from '../../src/auth/permissions.js';
import { buildRouteTable } from '../../src/rest/route-table.js';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp();

/** A value of the right type for a required argument, so a refusal cannot come from input checks. */
function sample(type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return [];
  const named = getNamedType(inner);
  if (isEnumType(named)) return named.getValues()[0].value;
  if (isInputObjectType(named)) {
    return Object.fromEntries(Object.values(named.getFields()).filter((f) => isNonNullType(f.type)).map((f) => [f.name, sample(f.type)]));
  }
  switch (named.name) {
    case 'UUID':
      return randomUUID();
    case 'Int':
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTime':
      return new Date(Date.now() + 86_400_000).toISOString();
    case 'JSON':
    case 'JSONObject':
      return {};
    default:
      return 'x';
  }
}

describe('route access', () => {
  it('refuses every route to a key without its declared access', async () => {
    const org = await api.newOrg();
    const operator = await api.keyFor(org, 'operator');
    const table = buildRouteTable(domains);
    const narrowedKeys = new Map<string, string>();
    const keyLacking = async (permission: string) => {
      // A full-role admin key narrowed to one other permission: everything else is missing.
      const other = allPermissions().find((p) => p !== permission)!;
      if (!narrowedKeys.has(other)) narrowedKeys.set(other, await api.keyFor(org, 'admin', [other]));
      return narrowedKeys.get(other)!;
    };
    let checked = 0;
    for (const { route, fullPath } of table.routes) {
      if (['public', 'member', 'platform'].includes(route.access) || !route.field) continue;
      const key = route.access === 'admin' || route.access === 'admin:full' ? operator : await keyLacking(route.access);
      const path = fullPath.replace(/:[^/]+/g, () => randomUUID());
      const [root, name] = route.field.split('.');
      const field = (root === 'Query' ? schema.getQueryType() : schema.getMutationType())!.getFields()[name];
      const pathParams = new Set([...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]));
      const body = Object.fromEntries(field.args.filter((a) => isNonNullType(a.type) && !pathParams.has(a.name)).map((a) => [a.name, sample(a.type)]));
      const r = await api.rest(route.method, path, { key, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : body });
      expect(r.status, `${route.method} ${fullPath} (${route.access}): ${JSON.stringify(r.body)}`).toBe(403);
      expect(route.style === 'bare' ? r.body.code : r.body.error.code).toBe(route.style === 'bare' ? 'ERR_FORBIDDEN' : 'FORBIDDEN');
      if (route.access === 'admin:full') {
        // Managing users and keys also needs a full key: an admin whose key is narrowed is refused.
        const narrowed = await api.rest(route.method, path, { key: await keyLacking('-'), body: route.method === 'GET' || route.method === 'DELETE' ? undefined : body });
        expect(narrowed.status, `${route.method} ${fullPath} with a narrowed admin key`).toBe(403);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });
});
