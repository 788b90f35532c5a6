// GraphQL types → JSON Schema (OpenAPI 3.1) for the API reference. Inputs come from argument types;
// answers come from the selection a route runs (rest/sofa.ts restOperation, as sofa derives it), so a documented
// answer has the keys the route sends. Named types become components; nullable values are marked with
// `null`. Answers stay open to keys added later (no `additionalProperties: false`), so a strict client
// does not break on a new field; input objects are closed, as graphql-js refuses their unknown fields.
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from 'graphql';
import type { JsonSchema } from '../../domains/manifest.js';

const BUILT_IN: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer', format: 'int32' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
};

/** The schema's own scalars, as they travel in JSON. */
const CUSTOM_SCALARS: Record<string, JsonSchema> = {
  UUID: { type: 'string', format: 'uuid' },
  DateTime: { type: 'string', format: 'date-time' },
  JSON: {},
  JSONObject: { type: 'object', additionalProperties: true },
  File: { type: 'string', format: 'binary' },
};

/**
 * Component names that differ from the GraphQL name: a component named like a global of TypeScript's
 * DOM library (`File`) becomes a generated type that shadows it (@hey-api/openapi-ts emits
 * `type File = Blob | File`, which does not compile).
 */
const COMPONENT_NAMES: Record<string, string> = { File: 'BinaryFile' };
export const componentName = (graphqlName: string) => COMPONENT_NAMES[graphqlName] ?? graphqlName;

export const ref = (graphqlName: string): JsonSchema => ({ $ref: `#/components/schemas/${componentName(graphqlName)}` });

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  const { type } = schema;
  if (typeof type === 'string' && !schema.enum) return { ...schema, type: [type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

function withDescription(schema: JsonSchema, description: string | null | undefined): JsonSchema {
  return description ? { ...schema, description } : schema;
}

/** The components of one document: named schemas registered as they are first met. */
export class SchemaRegistry {
  readonly schemas: Record<string, JsonSchema> = {};

  /** A named non-object type (scalar or enum) as a reference, registering it once. */
  private named(type: GraphQLNamedType): JsonSchema {
    if (BUILT_IN[type.name]) return BUILT_IN[type.name];
    const name = componentName(type.name);
    if (!this.schemas[name]) {
      if (isEnumType(type)) {
        this.schemas[name] = withDescription({ type: 'string', enum: type.getValues().map((v) => v.name) }, type.description);
      } else if (isScalarType(type)) {
        this.schemas[name] = withDescription(CUSTOM_SCALARS[type.name] ?? {}, type.description);
      }
    }
    return ref(type.name);
  }

  /** An argument or input field type, as a request carries it. */
  input(type: GraphQLInputType): JsonSchema {
    if (isNonNullType(type)) return this.inputInner(type.ofType);
    return nullable(this.inputInner(type));
  }

  private inputInner(type: GraphQLInputType): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.input(type.ofType) };
    if (isInputObjectType(type)) {
      if (!this.schemas[type.name]) {
        this.schemas[type.name] = {}; // placeholder against recursive inputs
        const fields = Object.values(type.getFields());
        const required = fields.filter((f) => isNonNullType(f.type) && f.defaultValue === undefined).map((f) => f.name);
        this.schemas[type.name] = withDescription(
          {
            type: 'object',
            properties: Object.fromEntries(fields.map((f) => [f.name, withDescription(this.input(f.type), f.description)])),
            ...(required.length ? { required } : {}),
            additionalProperties: false,
          },
          type.description,
        );
      }
      return ref(type.name);
    }
    return this.named(type);
  }

  /**
   * The answer for a selection of `type`. Objects selected with every field become (or reuse) their
   * type's component; any other selection is spelled out. `inline` keeps the outermost object spelled
   * out (a `spread` answer merges its keys).
   */
  output(type: GraphQLOutputType, selection: SelectionSetNode | undefined, inline = false): JsonSchema {
    if (isNonNullType(type)) return this.outputInner(type.ofType, selection, inline);
    return nullable(this.outputInner(type, selection, inline));
  }

  private outputInner(type: GraphQLOutputType, selection: SelectionSetNode | undefined, inline: boolean): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.output(type.ofType, selection) };
    if (isObjectType(type)) {
      const object = this.objectSchema(type, selection);
      if (inline) return object;
      const known = this.schemas[type.name];
      if (!known) {
        this.schemas[type.name] = object;
        return ref(type.name);
      }
      return JSON.stringify(known) === JSON.stringify(object) ? ref(type.name) : object;
    }
    return this.named(getNamedType(type));
  }

  private objectSchema(type: GraphQLObjectType, selection: SelectionSetNode | undefined): JsonSchema {
    const fields = type.getFields();
    const properties: Record<string, JsonSchema> = {};
    for (const node of selection?.selections ?? []) {
      if (node.kind !== Kind.FIELD) continue;
      const field = fields[node.name.value];
      const key = node.alias?.value ?? node.name.value;
      const schema = withDescription(this.output(field.type, node.selectionSet), field.description);
      properties[key] = field.deprecationReason ? { ...schema, deprecated: true } : schema;
    }
    // GraphQL answers every selected key (null when empty); keys added later are allowed.
    return withDescription({ type: 'object', properties, required: Object.keys(properties) }, type.description);
  }
}

/** Whether a type (or an input object's fields, deeply) holds a value of the named scalar. */
export function holdsScalar(type: GraphQLInputType, scalar: string, seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (named.name === scalar) return true;
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some((f) => holdsScalar(f.type, scalar, seen));
}
