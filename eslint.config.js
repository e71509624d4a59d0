// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/dist/**',
      'node_modules/**',
      '**/node_modules/**',
      'coverage/**',
      '*.cjs',
      '**/.next/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['src/cli/**', 'bench/**', 'scripts/**', 'examples/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // the cluster's every timer and instant goes through the injected clock (tests drive it)
    files: ['src/daemon/cluster/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'performance', 'Date'].map((name) => ({
          name,
          message: 'use the injected Clock (deps.clock) or deps.monotonic',
        })),
      ],
    },
  },
);
