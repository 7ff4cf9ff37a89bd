// Two lanes: `unit` (pure code, no Temporal server, no Slurm: seconds) and `integration` (one real
// Temporal dev server for the run, real Slurm clusters and the Kubernetes fakes started by the suites).
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    // Type-checking is done once by `tsc --noEmit` in `npm test`; ts-jest only transpiles.
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
};

/** @type {import('jest').Config} */
export default {
  testTimeout: 120_000,
  // The default reporter, and one line per test file for .ci/run's slowest-suites table.
  reporters: ['default', '<rootDir>/test/lanes/suite-times.mjs'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // Not part of npm test: opt-in suites against real external systems (npm run test:k8s-real), the
      // long ones (npm run test:long: minutes of real time with default tuning, or beds of their own),
      // the real Kubernetes control plane suites (npm run test:k8s: binaries built once, ~10 min), and the
      // scale-out suites on a full Temporal server with PostgreSQL and mTLS (npm run test:scale).
      testPathIgnorePatterns: ['/node_modules/', '\\.real\\.test\\.ts$', '\\.long\\.test\\.ts$', '\\.cp\\.test\\.ts$', '\\.scale\\.test\\.ts$', '<rootDir>/test/unit/'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      setupFiles: ['<rootDir>/test/lanes/quiet-runtime.ts'],
      globalTeardown: '<rootDir>/test/global-teardown.mjs',
    },
  ],
};
