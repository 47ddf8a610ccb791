import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', 'out/**', 'bench/out/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // The core is pure: it talks to the world only through ports.
    files: ['lambdas/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['node:fs', 'fs', 'node:fs/*', 'fs/*'], message: 'core must not touch the filesystem; use a port' },
          { group: ['undici', '@aws-sdk/*', 'aws-cdk-lib', 'aws-cdk-lib/*'], message: 'core must not depend on transports or AWS' },
          { group: ['../adapters/*', '../../adapters/*', '../handlers/*', '../../handlers/*', '../local/*', '../../local/*', '../runtime/*', '../../runtime/*'], message: 'dependencies point inward' },
        ],
      }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'core reads no environment; pass config in' }],
    },
  },
  {
    // Size guard: a file of one concern stays readable, a function of one step fits a screen.
    // Blank lines and comments do not count. Generated code is exempt (*.generated.ts), and so
    // is test/unit/capture/oracle/: a frozen copy of the previous parser, kept as the reference
    // implementation the new one is checked against, not code anyone edits.
    files: ['{lambdas,lib,sim,bench,scripts,bin,test/support}/**/*.{ts,mts,js,mjs,cjs}'],
    ignores: ['**/*.generated.ts', '**/*.test.ts', 'test/unit/capture/oracle/**'],
    rules: {
      'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Tests: the file size only (a describe callback is long by nature).
    files: ['test/**/*.{ts,mts,js,mjs,cjs}'],
    ignores: ['test/support/**', 'test/unit/capture/oracle/**'],
    rules: {
      'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }],
    },
  },
);
