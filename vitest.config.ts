import { defineConfig } from "vitest/config";

/**
 * Tests that bound their own process's memory (RSS or array buffers). In a worker that ran other
 * files first they would see those files' heap, so each runs in a project of its own.
 */
const MEASURES_OWN_MEMORY = [
  "test/frames-bad-input.test.ts",
  "test/sources-command-flood.test.ts",
  "test/sources-file-bounds.test.ts",
];

/**
 * Test files share a worker's modules (`isolate: false`): importing the whole module graph afresh
 * for each of ~290 files took most of the suite's time (about 600 s of the 2-core CI's). No test
 * mocks a module or leaves global state behind. Vitest still gives each project fresh workers
 * (it recycles them between projects), which is how a file that measures its own memory gets a
 * process to itself.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    isolate: false,
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: MEASURES_OWN_MEMORY,
          globalSetup: ["test/support/postgres-global-setup.ts"],
        },
      },
      ...MEASURES_OWN_MEMORY.map((file) => ({
        extends: true as const,
        test: { name: file.slice("test/".length, -".test.ts".length), include: [file] },
      })),
    ],
  },
});
