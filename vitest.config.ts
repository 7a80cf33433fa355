import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Test files share a worker's modules: importing them again for each of ~290 files cost
    // about 600 s of the 2-core CI's time (the suite took 18 minutes, now about 11). No test
    // mocks a module or leaves global state behind (the one that sets an environment variable
    // deletes it), so a file sees nothing another left.
    isolate: false,
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
