// The GraphQL variables of a REST call, built from the path, the documented query parameters and the
// body, typed like the field's arguments WITHOUT coercion (decisions.md "Input rules"): JSON body values
// must already have the argument's type (graphql-js checks scalars; lists must be arrays here, where
// GraphQL would wrap a single value). Text from a path, query string or form field is parsed strictly.
import {
  getNamedType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLInt,
  GraphQLScalarType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
} from 'graphql';
import { invalidField, invalidParameter } from '../errors.js';

/** A JSON body value against an argument type: arrays for lists, objects for input objects. */
function checkShape(name: string, value: unknown, type: GraphQLInputType, depth = 0): void {
  if (value === null || value === undefined) return;
  if (depth > 20) throw invalidField(name, 'é profundo demais');
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    if (!Array.isArray(value)) throw invalidField(name, 'deve ser uma lista');
    value.forEach((item, i) => checkShape(`${name}[${i}]`, item, inner.ofType, depth + 1));
    return;
  }
  if (isInputObjectType(inner)) {
    if (typeof value !== 'object' || Array.isArray(value)) throw invalidField(name, 'deve ser um objeto');
    const fields = inner.getFields();
    for (const [key, v] of Object.entries(value as Record<string, unknown>))
      if (fields[key]) checkShape(`${name}.${key}`, v, fields[key].type, depth + 1);
  }
}

/** Marks text that holds JSON (a form field carrying a list). */
const GraphQLJSONText = new GraphQLScalarType({ name: 'JSONText' });

/** Text (path, query string, form field) to the argument's type; refuses what does not parse exactly. */
function fromText(name: string, text: string, type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    if (!text.trim().startsWith('[')) return [fromText(name, text, inner.ofType)];
    const parsed = fromText(name, text, GraphQLJSONText);
    if (!Array.isArray(parsed)) throw invalidField(name, 'deve ser uma lista');
    return parsed;
  }
  const named = getNamedType(inner);
  if (named === GraphQLInt) {
    if (!/^[+-]?\d{1,10}$/.test(text.trim())) throw invalidParameter(name, 'deve ser um número inteiro');
    return Number(text);
  }
  if (named === GraphQLFloat) {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw invalidParameter(name, 'deve ser um número');
    return n;
  }
  if (named === GraphQLBoolean) {
    if (text !== 'true' && text !== 'false') throw invalidParameter(name, 'deve ser true ou false');
    return text === 'true';
  }
  if (isInputObjectType(named) || named === GraphQLJSONText || named.name === 'JSON' || named.name === 'JSONObject') {
    try {
      return JSON.parse(text);
    } catch {
      throw invalidParameter(name, 'deve ser JSON');
    }
  }
  if (isEnumType(named) || isScalarType(named)) return text;
  return text;
}

export interface RestInput {
  params: Record<string, string>;
  /** Documented query parameters (all of them on GET; the route's `query` list otherwise). */
  query: Map<string, string[]>;
  json?: Record<string, unknown>;
  form?: Map<string, string[]>;
  files?: Map<string, File>;
}

export function restVariables(args: readonly GraphQLArgument[], input: RestInput): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const arg of args) {
    const { name, type } = arg;
    const isList = isListType(isNonNullType(type) ? type.ofType : type);
    // A repeated parameter fills a list; otherwise the last value counts.
    const listOf = (texts: string[]) =>
      isList ? texts.flatMap((t) => fromText(name, t, type) as unknown[]) : fromText(name, texts[texts.length - 1], type);
    if (name in input.params) variables[name] = fromText(name, decodePathParam(name, input.params[name]), type);
    else if (input.files?.has(name)) variables[name] = input.files.get(name);
    else if (input.json && name in input.json) {
      checkShape(name, input.json[name], type);
      variables[name] = input.json[name];
    } else if (input.form?.has(name)) variables[name] = listOf(input.form.get(name)!);
    else if (input.query.has(name)) variables[name] = listOf(input.query.get(name)!);
  }
  return variables;
}

function decodePathParam(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidParameter(name, 'é inválido');
  }
}
