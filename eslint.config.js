// @ts-check
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'cdk.out/**',
      '.landscape/**',
      '.venv/**',
      '.tools/**',
      'coverage/**',
      'dist/**',
      'test/fixtures/lint/**',
    ],
  },
  ...tseslint.configs.recommended,
  prettier,
  {
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      eqeqeq: ['error', 'always'],
      // A cycle makes a module's meaning depend on load order; shared types belong to the module both use.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              // Benchmarks and the product share what tests use only through harness/ (the runner's own
              // vitest.config.ts names its set-up in test/).
              target: [
                './adapters',
                './cdk',
                './cli',
                './core',
                './functions',
                './harness',
                './local',
                './scripts',
                './seed',
              ],
              from: './test',
              message: 'Only tests import from test/: what scripts share with tests lives in harness/.',
            },
            {
              target: ['./adapters', './cdk', './cli', './core', './functions', './local', './seed'],
              from: './harness',
              message: 'The product does not depend on the harness that drives it (tests and benchmarks do).',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain core stays pure: no cloud SDK, no Lambda types, no infrastructure code.
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@aws-sdk/*',
                'aws-lambda',
                '@types/aws-lambda',
                'aws-cdk-lib',
                'aws-cdk-lib/*',
                '@middy/*',
                '@aws-lambda-powertools/*',
              ],
              message: 'core/ is the pure domain: no AWS SDK, Lambda or CDK imports.',
            },
            {
              group: ['../adapters/*', '../../adapters/*', '../functions/*', '../../functions/*'],
              message: 'core/ must not depend on adapters or handlers.',
            },
          ],
        },
      ],
    },
  },
);
