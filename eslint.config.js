// ESLint flat config: typescript-eslint, Nx module boundaries (dependency direction), Prettier last.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const boundaries = (allowTesting) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allowCircularSelfDependency: true,
    // @agl/store re-exports @agl/client's StoreClient (`@agl/store/client`); @agl/client's tests run against a real store.
    // @agl/testing's Tinker stand-in speaks @agl/tinker's wire; @agl/tinker's client tests run against that stand-in.
    ignoredCircularDependencies: [
      ['@agl/client', '@agl/store'],
      ['@agl/tinker', '@agl/testing'],
    ],
    checkDynamicDependenciesExceptions: ['.*'],
    depConstraints: [
      { sourceTag: 'type:core', onlyDependOnLibsWithTags: allowTesting ? ['type:testing'] : [] },
      {
        sourceTag: 'type:runtime',
        onlyDependOnLibsWithTags: ['type:core', 'type:runtime', ...(allowTesting ? ['type:testing'] : [])],
      },
      {
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: ['type:core', 'type:runtime', ...(allowTesting ? ['type:testing'] : [])],
      },
      {
        sourceTag: 'type:adapter',
        onlyDependOnLibsWithTags: ['type:core', 'type:runtime', ...(allowTesting ? ['type:testing'] : [])],
      },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:core', 'type:runtime'] },
      {
        sourceTag: 'type:example',
        onlyDependOnLibsWithTags: ['type:core', 'type:runtime', 'type:adapter', 'type:testing', 'type:app'],
      },
      {
        sourceTag: 'type:tool',
        onlyDependOnLibsWithTags: ['type:core', 'type:runtime', 'type:adapter', 'type:testing', 'type:app'],
      },
    ],
  },
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.nx/**',
      '**/coverage/**',
      '**/test-artifacts/**',
      '**/*.d.ts',
      '**/__fixtures__/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs'],
    plugins: { '@nx': nx },
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(false),
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'max-lines': ['warn', { max: 500, skipBlankLines: true, skipComments: true }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    files: ['**/src/**/*.ts', '**/src/**/*.tsx'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', '**/bin.ts', '**/cli/src/**', '**/examples/**', '**/tools/**'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', '**/test/**/*.ts', '**/bench/**/*.ts', '**/__fixtures__/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(true),
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.config.ts', '**/*.config.js', 'eslint.config.js', '**/tsup.config.ts', '**/vitest.config.ts'],
    rules: { 'no-restricted-syntax': 'off', '@nx/enforce-module-boundaries': 'off' },
  },
  prettier,
);
