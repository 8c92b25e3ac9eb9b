// The pure tests: no servers, no global stack. `npm run test:unit`.
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/unit'],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 30_000,
};
