// GraphQL Code Generator: typed documents for the GraphQL tests, from the printed schema.
// `npm run codegen` after changing schema.graphql or a `graphql(...)` document under test/.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', '!test/gql/**'],
  ignoreNoDocuments: true,
  generates: {
    'test/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        scalars: { UUID: 'string', DateTime: 'string', JSON: 'unknown', JSONObject: 'Record<string, unknown>' },
      },
    },
  },
};

export default config;
