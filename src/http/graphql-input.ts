// The input hygiene of decisions.md on /graphql: variables and string literals with NUL or unpaired
// surrogates, or nested too deep, are refused with 400 before execution (REST checks its variables in
// rest/handler.ts with the same function).
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../errors.js';
import { assertCleanInput, isDirtyText } from '../schema/clean-input.js';
import { executionArgs } from './execution-args.js';

function refuse(error: AppError): never {
  throw new GraphQLError(error.message, { extensions: { code: error.kind, status: error.status, http: { status: error.status } } });
}

/** Documents already found clean: Yoga hands the same document object to every request with its text. */
const cleanDocuments = new WeakSet<DocumentNode>();

function assertCleanDocument(document: DocumentNode) {
  if (cleanDocuments.has(document)) return;
  visit(document, {
    [Kind.STRING](node) {
      if (isDirtyText(node.value))
        refuse(new AppError('INVALID_INPUT', 'A consulta contém caracteres inválidos (NUL ou surrogate isolado)'));
    },
  });
  cleanDocuments.add(document);
}

export function cleanInputPlugin(): Plugin {
  return {
    onExecute({ args: untyped }) {
      const args = executionArgs(untyped);
      try {
        assertCleanInput(args.variableValues ?? {});
      } catch (e) {
        if (e instanceof AppError) refuse(e);
        throw e;
      }
      assertCleanDocument(args.document);
    },
  };
}
