// The input hygiene of decisions.md on /graphql: variables and string literals with NUL or unpaired
// surrogates, or nested too deep, are refused with 400 before execution (REST checks its variables in
// rest/handler.ts with the same function).
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../errors.js';
import { assertCleanInput, isDirtyText } from '../schema/clean-input.js';

function refuse(error: AppError): never {
  throw new GraphQLError(error.message, { extensions: { code: error.kind, status: error.status, http: { status: error.status } } });
}

function assertCleanDocument(document: DocumentNode) {
  visit(document, {
    [Kind.STRING](node) {
      if (isDirtyText(node.value)) refuse(new AppError('INVALID_INPUT', 'A consulta contém caracteres inválidos (NUL ou surrogate isolado)'));
    },
  });
}

export function cleanInputPlugin(): Plugin {
  return {
    onExecute({ args }) {
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
