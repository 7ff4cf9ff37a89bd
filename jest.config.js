/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    // Type-checking is done once by `tsc --noEmit` in `npm test`; ts-jest only transpiles.
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Opt-in suites against real external systems (npm run test:k8s-real) are not part of npm test.
  testPathIgnorePatterns: ['/node_modules/', '\\.real\\.test\\.ts$'],
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  testTimeout: 120_000,
};
