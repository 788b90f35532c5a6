import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildSchema, isInputObjectType, isInterfaceType, isObjectType } from 'graphql';
import { domains, schema } from '../src/domains/index.js';
import { printedSchema, SCHEMA_FILE } from '../src/print-schema.js';
import { buildRouteTable } from '../src/rest/route-table.js';
import { isPermission } from '../src/auth/permissions.js';
import { accessOfField, guardRootFields } from '../src/auth/access.js';

// Relay's connection types keep their standard camelCase names (pageInfo, hasNextPage…).
const RELAY_TYPES = (name: string) => name === 'PageInfo' || name.endsWith('Connection') || name.endsWith('Edge');
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const CAMEL = /^[a-z][a-zA-Z0-9]*$/;

describe('schema', () => {
  it('schema.graphql is the printed schema (run `npm run schema:print`)', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
  });

  it('uses snake_case wire names for fields and arguments, camelCase verbs for root operations', () => {
    const bad: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__')) continue;
      const root = type === schema.getQueryType() || type === schema.getMutationType() || type === schema.getSubscriptionType();
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (root ? !CAMEL.test(field.name) : !RELAY_TYPES(type.name) && !SNAKE.test(field.name)) bad.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : []) {
            if (!SNAKE.test(arg.name) && !(RELAY_TYPES(type.name) || ['first', 'last', 'after', 'before'].includes(arg.name)))
              bad.push(`${type.name}.${field.name}(${arg.name})`);
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('every REST route points at an existing root field whose path params are arguments', () => {
    for (const { route } of buildRouteTable(domains).routes) {
      if (!route.field) continue;
      const [typeName, fieldName] = route.field.split('.');
      const type = typeName === 'Query' ? schema.getQueryType() : schema.getMutationType();
      const field = type?.getFields()[fieldName];
      expect(field, route.field).toBeDefined();
      for (const param of route.path.split('/').filter((s) => s.startsWith(':'))) {
        expect(
          field!.args.map((a) => a.name),
          `${route.method} ${route.path}`,
        ).toContain(param.slice(1));
      }
    }
  });

  it('documents every type and root field', () => {
    const undocumented: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || RELAY_TYPES(type.name)) continue;
      if (!type.description && !['Boolean', 'String', 'Int', 'Float', 'ID'].includes(type.name)) undocumented.push(type.name);
    }
    for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
      for (const field of Object.values(root.getFields())) if (!field.description) undocumented.push(`${root.name}.${field.name}`);
    }
    expect(undocumented).toEqual([]);
  });
});

describe('domain manifests', () => {
  it('every route comes from a manifest, with its domain, style and access; the central lists derive from them', () => {
    const table = buildRouteTable(domains);
    const declared = domains.flatMap((d) => d.routes.map((r) => ({ domain: d.name, route: r })));
    expect(table.routes).toHaveLength(declared.length);
    const ACCESS = new Set(['public', 'platform', 'member', 'admin:full']);
    for (const c of table.routes) {
      const origin = declared.find((d) => d.route === c.route);
      expect(origin?.domain, `${c.route.method} ${c.fullPath}`).toBe(c.domain);
      expect(['bare', 'envelope']).toContain(c.route.style);
      const access = c.route.access;
      const valid =
        typeof access === 'string' ? ACCESS.has(access) || isPermission(access) : access.length > 0 && access.every(isPermission);
      expect(valid, `${c.fullPath}: access ${JSON.stringify(access)}`).toBe(true);
      expect(Boolean(c.route.field) !== Boolean(c.route.handler), `${c.fullPath}: a field or a handler`).toBe(true);
      // The style of an area (what unknown paths and early refusals answer in) is the style of its routes.
      expect(table.styleOf(c.fullPath.replace(/:[^/]+/g, 'x'))).toBe(c.route.style);
    }
  });

  it('permissions are defined by domains, each once, and held by owner and admin', () => {
    const names = domains.flatMap((d) => (d.permissions ?? []).map((p) => p.name));
    expect(new Set(names).size).toBe(names.length);
    for (const d of domains)
      for (const p of d.permissions ?? []) expect(p.roles, p.name).toEqual(expect.arrayContaining(['owner', 'admin']));
  });

  it('every root field declares its access; a field without one, or one naming an unknown permission, cannot start', () => {
    for (const root of ['Query', 'Mutation', 'Subscription'] as const) {
      const type = root === 'Query' ? schema.getQueryType() : root === 'Mutation' ? schema.getMutationType() : schema.getSubscriptionType();
      for (const name of Object.keys(type!.getFields())) expect(accessOfField(schema, root, name), `${root}.${name}`).toBeDefined();
    }
    const tiny = buildSchema('type Query { known: Int, forgotten: Int }');
    const route = { method: 'GET', path: '/known', field: 'Query.known', style: 'bare', access: 'member' } as const;
    expect(() => guardRootFields(tiny, [{ name: 'a', routes: [route] }])).toThrow(/without a declared access.*Query\.forgotten/);
    expect(() => guardRootFields(tiny, [{ name: 'a', routes: [route], fields: { 'Query.forgotten': 'pipeline.everything' } }])).toThrow(
      /unknown permission pipeline\.everything/,
    );
    expect(() =>
      guardRootFields(tiny, [{ name: 'a', routes: [route], fields: { 'Query.forgotten': 'member', 'Query.gone': 'member' } }]),
    ).toThrow(/Query\.gone/);
    expect(
      guardRootFields(tiny, [{ name: 'a', routes: [route], fields: { 'Query.forgotten': ['leads.view', 'pipeline.view'] } }]),
    ).toBeDefined();
  });

  it('refuses a table whose area mixes styles, or a route declared twice', () => {
    const route = { method: 'GET', path: '/things', field: 'Query.things', style: 'bare', access: 'member' } as const;
    expect(() =>
      buildRouteTable([
        { name: 'a', routes: [route] },
        { name: 'b', routes: [{ ...route, path: '/things/:id', style: 'envelope' }] },
      ]),
    ).toThrow(/mix/);
    expect(() =>
      buildRouteTable([
        { name: 'a', routes: [route] },
        { name: 'b', routes: [route] },
      ]),
    ).toThrow(/twice/);
  });
});
