// ESLint: typescript-eslint's recommended-type-checked rules over the whole TypeScript project
// (src, test, bench), zero warnings allowed (`npm run lint`). Formatting is Prettier's, not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/generated/',
      'test/rest-client/generated-clients/',
      'test/gql/',
      'coverage/',
      'dist/',
      'data/',
      '**/*.mjs',
      '**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_`-prefixed names are deliberately unused (a destructured field left out, a required parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A timer declared before the closure that clears it and assigned after: `let` is right there.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Input rules match control characters on purpose (NUL and C0 refusals, sniffing text files).
      'no-control-regex': 'off',
      // `async` is how an implementation of a Promise-returning interface (a job handler, a storage
      // method, a generator the SDK reads) is written even when it awaits nothing.
      '@typescript-eslint/require-await': 'off',
      // Its type information disagrees with tsc's here: removing the assertions it flags broke the build.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    // Tests and benches read answers as untyped JSON (`await res.json()`) and assert on or compare them:
    // the `any` that flows from there is the point of a black-box client, so the no-unsafe-* family is
    // off there only. Production code (src/) is held to the whole rule set.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Node's http.createServer(async (req, res) => …) is how the test and bench servers are written.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // Tests pass methods of stubs and servers around (`server.close`, `stream.destroy`) on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
