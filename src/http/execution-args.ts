import type { DocumentNode, ExecutionArgs } from 'graphql';

/** Envelop types the arguments its hooks receive loosely (`any` document and schema); what they carry is
 * graphql-js's own, so the plugins read them through this one assertion. */
export const executionArgs = (args: unknown): ExecutionArgs => args as ExecutionArgs;

/** The parsed document a validation hook receives, under the same loose typing. */
export const documentOf = (params: { documentAST: unknown }): DocumentNode | undefined => params.documentAST as DocumentNode | undefined;
