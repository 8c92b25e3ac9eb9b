// Lint: type-aware rules that catch real bugs (a promise nobody awaits, an async callback where
// a sync one is expected, dead names), no import cycles, and workflow code kept bundle-safe.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

/**
 * Workflow code runs in Temporal's deterministic sandbox. It may import @temporalio/workflow and
 * @temporalio/common, and, by value, only pure modules: other workflows and the shared modules
 * named below, which follow the same rule, so the guarantee holds for everything the bundle
 * reaches. Type imports are erased at compile time and allowed.
 */
const WORKFLOW_SAFE_SHARED = [
  'shared/**/messages.ts',
  'shared/**/*-rules.ts',
  'shared/concurrency.ts',
  'shared/temporal/define-workflow.ts',
];
const workflowImports = {
  patterns: [
    {
      regex: '^(?!@temporalio/(workflow|common)$|\\.)',
      allowTypeImports: true,
      message: 'Workflow code imports only @temporalio/workflow and @temporalio/common (types of anything else).',
    },
    {
      regex: '^\\.{1,2}/(?!(.*/)?([\\w.-]+\\.workflow|messages|[\\w-]+-rules|concurrency|define-workflow)$)',
      allowTypeImports: true,
      message:
        'Workflow code imports by value only workflows and pure shared modules (messages, *-rules, concurrency, define-workflow).',
    },
  ],
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      'bench/results/**',
      'scripts/servers/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { ...importX.flatConfigs.typescript.settings },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-control-regex': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts', ...WORKFLOW_SAFE_SHARED],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', workflowImports] },
  },
  {
    // the API reaches workflows through their definitions in shared/<domain>/messages.ts only
    files: ['api/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(workflows|activities)(/|$)',
              message: 'api/ imports nothing from workflows/ or activities/: use shared/<domain>/messages.ts.',
            },
          ],
        },
      ],
    },
  },
  prettier,
);
