// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.landscape/**', '.venv/**', 'coverage/**', 'dist/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      eqeqeq: ['error', 'always'],
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
            { group: ['@aws-sdk/*', 'aws-lambda', '@types/aws-lambda', 'aws-cdk-lib', 'aws-cdk-lib/*', '@middy/*', '@aws-lambda-powertools/*'], message: 'core/ is the pure domain: no AWS SDK, Lambda or CDK imports.' },
            { group: ['../adapters/*', '../../adapters/*', '../functions/*', '../../functions/*'], message: 'core/ must not depend on adapters or handlers.' },
          ],
        },
      ],
    },
  },
);
