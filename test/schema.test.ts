import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isInputObjectType, isInterfaceType, isObjectType } from 'graphql';
import { schema } from '../src/schema/index.js';
import { printedSchema, SCHEMA_FILE } from '../src/schema/print.js';
import { restRoutes } from '../src/rest/routes.js';

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
      const root = type === schema.getQueryType() || type === schema.getMutationType();
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (root ? !CAMEL.test(field.name) : !RELAY_TYPES(type.name) && !SNAKE.test(field.name)) bad.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : []) {
            if (!SNAKE.test(arg.name) && !(RELAY_TYPES(type.name) || ['first', 'last', 'after', 'before'].includes(arg.name))) bad.push(`${type.name}.${field.name}(${arg.name})`);
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('every REST route points at an existing root field whose path params are arguments', () => {
    for (const route of restRoutes) {
      const [typeName, fieldName] = route.field.split('.');
      const type = typeName === 'Query' ? schema.getQueryType() : schema.getMutationType();
      const field = type?.getFields()[fieldName];
      expect(field, route.field).toBeDefined();
      for (const param of route.path.split('/').filter((s) => s.startsWith(':'))) {
        expect(field!.args.map((a) => a.name), `${route.method} ${route.path}`).toContain(param.slice(1));
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
