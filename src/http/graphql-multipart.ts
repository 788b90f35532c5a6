// The GraphQL multipart request specification (github.com/jaydenseric/graphql-multipart-request-spec) on
// /graphql, streamed: `operations` then `map` come first, then each file part is spooled to a temporary
// file as it arrives (storage/file-spool.ts) and put into the variables at the paths the map gives, as
// a standard File. Yoga's own parser would hold the whole form in memory. The app gives each multipart
// request its spool and disposes of it once the request is answered (app.ts).
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { invalidInput, invalidField } from '../errors.js';
import type { FileSpool } from '../storage/file-spool.js';
import { isMultipartForm, readMultipartForm, type FormLimits } from '../storage/multipart-form.js';
import { MAX_BODY_BYTES } from '../config.js';

/** `operations` may be as long as a JSON body (its variables carry the other arguments); two text fields only. */
export const GRAPHQL_FORM_LIMITS: FormLimits = { maxFields: 2, maxFieldBytes: MAX_BODY_BYTES, maxFiles: 20, maxBodyBytes: MAX_BODY_BYTES };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Json = Record<string, unknown> | unknown[];
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField(field, 'deve ser JSON');
  }
}

function parseOperations(text: string): Record<string, unknown> {
  const operations = parseJson('operations', text);
  if (Array.isArray(operations)) throw invalidInput('Envie uma operação por requisição: lotes não são aceitos');
  if (!isObject(operations)) throw invalidField('operations', 'deve ser um objeto JSON');
  return operations;
}

/** Where a mapped file goes: the container and the key of a `null` placeholder inside `variables`. */
interface Slot {
  container: Json;
  key: string;
}

/** A map path must name a `null` placeholder inside the operation's variables (`variables.file`, `variables.files.0`). */
function slotOf(operations: Record<string, unknown>, path: unknown): Slot {
  const refuse = () => invalidInput(`O caminho ${String(path).slice(0, 200)} do campo map não aponta para uma variável nula da operação`);
  if (typeof path !== 'string') throw refuse();
  const [root, ...keys] = path.split('.');
  if (root !== 'variables' || keys.length === 0 || !isObject(operations.variables)) throw refuse();
  let container: Json = operations.variables;
  for (const [i, key] of keys.entries()) {
    const exists = Array.isArray(container)
      ? /^(0|[1-9]\d*)$/.test(key) && Number(key) < container.length
      : !FORBIDDEN_KEYS.has(key) && Object.hasOwn(container, key);
    if (!exists) throw refuse();
    const value: unknown = (container as Record<string, unknown>)[key];
    if (i === keys.length - 1) {
      if (value !== null) throw refuse();
      return { container, key };
    }
    if (typeof value !== 'object' || value === null) throw refuse();
    container = value as Json;
  }
  throw refuse();
}

/** The map: file part name → the placeholders it fills; every path valid and used once. */
function parseMap(text: string, operations: Record<string, unknown>): Map<string, Slot[]> {
  const map = parseJson('map', text);
  if (!isObject(map)) throw invalidField('map', 'deve ser um objeto JSON');
  const entries = Object.entries(map);
  if (entries.length > GRAPHQL_FORM_LIMITS.maxFiles)
    throw invalidInput(`O formulário aceita no máximo ${GRAPHQL_FORM_LIMITS.maxFiles} arquivos`);
  const slots = new Map<string, Slot[]>();
  const seen = new Set<string>();
  for (const [name, paths] of entries) {
    if (!Array.isArray(paths) || paths.length === 0)
      throw invalidField('map', `deve dar uma lista de caminhos para o arquivo ${name.slice(0, 100)}`);
    slots.set(
      name,
      paths.map((path) => {
        const slot = slotOf(operations, path);
        if (seen.has(path as string)) throw invalidInput(`O caminho ${String(path).slice(0, 200)} aparece mais de uma vez no campo map`);
        seen.add(path as string);
        return slot;
      }),
    );
  }
  return slots;
}

/** Reads a GraphQL multipart request: its operation, with every mapped file in place. 400 for anything off the specification. */
export async function readGraphQLMultipart(request: Request, spool: FileSpool): Promise<GraphQLParams> {
  let operations: Record<string, unknown> | undefined;
  let map: Map<string, Slot[]> | undefined;
  const files = new Map<string, File>();
  const arrived = new Set<string>();
  await readMultipartForm(request, GRAPHQL_FORM_LIMITS, {
    field(name, value) {
      if (name === 'operations' && operations === undefined && map === undefined) operations = parseOperations(value);
      else if (name === 'map' && operations !== undefined && map === undefined) map = parseMap(value, operations);
      else throw invalidInput(`Campo inesperado: ${name.slice(0, 100)}. Envie operations, depois map, depois os arquivos`);
    },
    async file(part) {
      if (!map) throw invalidInput('Envie operations e map antes dos arquivos');
      if (!map.has(part.field)) throw invalidInput(`O arquivo ${part.field.slice(0, 100)} não consta do campo map`);
      if (arrived.has(part.field)) throw invalidInput(`O arquivo ${part.field.slice(0, 100)} foi enviado mais de uma vez`);
      arrived.add(part.field);
      files.set(part.field, await spool.take(part));
    },
  });
  if (!operations || !map) throw invalidInput('Envie os campos operations e map');
  for (const [name, slots] of map) {
    const file = files.get(name);
    if (!file) throw invalidInput(`O arquivo ${name.slice(0, 100)} do campo map não foi enviado`);
    for (const { container, key } of slots) (container as Record<string, unknown>)[key] = file;
  }
  return operations as GraphQLParams;
}

/** Parses multipart POSTs to /graphql with readGraphQLMultipart, in the request's spool (server context `spool`). */
export function graphqlMultipartPlugin(): Plugin<object, { spool?: FileSpool }> {
  return {
    onRequestParse({ request, serverContext, setRequestParser }) {
      const { spool } = serverContext;
      if (request.method === 'POST' && isMultipartForm(request) && spool) setRequestParser((r) => readGraphQLMultipart(r, spool));
    },
  };
}
