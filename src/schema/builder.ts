// The Pothos builder: plugins and scalars only. Types live in domains/*/types.ts.
import { GraphQLError } from 'graphql';
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import { DateTimeResolver, JSONObjectResolver, JSONResolver, UUIDResolver } from 'graphql-scalars';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { Context } from '../context/context.js';
import type { ScopedCursor, ScopedWhereUnique } from '../db/tenant-scope.js';

/**
 * The models as Pothos meets them, through the tenant-scoped client (ctx.db): there `{ id }` is a
 * unique where, and `cursor: 'id'` a connection's cursor, though the key is (tenant_id, id).
 */
type ScopedModel<T> = T extends { WhereUnique: infer W; Include: infer I }
  ? Omit<T, 'WhereUnique' | 'Include'> & { WhereUnique: ScopedWhereUnique<W>; Include: { [K in keyof I]: ScopedCursor<I[K]> } }
  : T;
type ScopedPrismaTypes = { [M in keyof PrismaTypes]: ScopedModel<PrismaTypes[M]> };

export const builder = new SchemaBuilder<{
  PrismaTypes: ScopedPrismaTypes;
  Context: Context;
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
  Scalars: {
    UUID: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    File: { Input: File; Output: never };
  };
}>({
  plugins: [PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  prisma: {
    // Every Prisma query Pothos plans runs on the request's tenant-scoped client.
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // Every connection also offers `nodes` (the edges' nodes) for clients that need no cursors per item.
    nodesOnConnection: { description: 'The nodes of the edges, in order.' },
  },
});

builder.addScalarType('UUID', UUIDResolver);
builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);
builder.scalarType('File', {
  description:
    'A file sent with the request: a multipart/form-data part on REST, or per the GraphQL multipart request specification on /graphql. Input only.',
  serialize: () => {
    throw new Error('File is an input-only scalar');
  },
  parseValue: (value) => {
    // Both transports hand over a File read from a temporary file (storage/file-spool.ts); JSON
    // variables cannot hold one.
    if (value instanceof File) return value;
    throw new GraphQLError('Esperado um arquivo enviado como multipart/form-data');
  },
  parseLiteral: () => {
    throw new GraphQLError('Um arquivo não pode ser escrito na consulta: envie-o como multipart/form-data');
  },
});

builder.queryType({ description: 'Reads. Every root field is scoped to the caller’s organisation.' });
builder.mutationType({ description: 'Writes. Every root field is scoped to the caller’s organisation.' });
builder.subscriptionType({
  description: 'Live events over server-sent events (Accept: text/event-stream), scoped to the caller’s organisation.',
});

/**
 * Marks a field as part of the graph only: it is served on /graphql but pruned from the schema the REST
 * layer is generated from, so REST answers keep exactly the spec's shapes (rest/sofa.ts).
 */
export const GRAPH_ONLY = { graphOnly: true } as const;
