import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ActionLogEntry,
  createMemoryActionLog,
  createStepScheduler,
  createToolExecutor,
  createToolRegistry,
  createVariableStore,
  defineTool,
} from "../src/actions/index.js";
import { ConfigError, SpoolError } from "../src/spec/index.js";
import { action, lifecycle } from "./support/actions-helpers.js";

const search = defineTool({
  name: "search",
  description: "Searches the web.",
  parameters: z.strictObject({
    query: z.string().min(1),
    limit: z.number().int().max(50).default(10),
    filters: z.object({ site: z.string() }).optional(),
  }),
  async execute({ query, limit }, context) {
    context.progress({ found: 1 });
    context.progress({ found: 2 });
    return { query, limit };
  },
});

function toolStep() {
  const log = createMemoryActionLog();
  const seen: ActionLogEntry[] = [];
  const scheduler = createStepScheduler({
    log,
    variables: createVariableStore(),
    executors: [createToolExecutor(createToolRegistry([search]))],
    observer: { onEvent: (entry) => seen.push(entry) },
  });
  return { log, scheduler, seen };
}

describe("tool executor", () => {
  it("runs a tool with parsed parameters (defaults applied) and streams progress to subscribers", async () => {
    const { scheduler, log, seen } = toolStep();
    await scheduler.submit(
      action("s", { mode: "sync", name: "search", parameters: { query: "tea" } }),
    );
    expect(log.ofType("action.succeeded")[0]!.data.output).toEqual({ query: "tea", limit: 10 });
    expect(log.ofType("action.progress").map((e) => e.data.data)).toEqual([
      { found: 1 },
      { found: 2 },
    ]);
    expect(seen.filter((e) => e.type === "action.progress")).toHaveLength(2);
  });

  it("refuses invalid parameters before dispatch, listing every field path", async () => {
    const { scheduler, log } = toolStep();
    await scheduler.submit(
      action("s", {
        mode: "sync",
        name: "search",
        parameters: { query: 5, limit: 99, filters: { site: 1 }, extra: true },
      }),
    );
    expect(lifecycle(log)).toEqual(["skipped s"]);
    const message = log.ofType("action.skipped")[0]!.data.message;
    expect(log.ofType("action.skipped")[0]!.data.reason).toBe("bad-parameters");
    expect(message).toContain('bad parameters for tool "search"');
    expect(message).toMatch(/query: [^;]*string/);
    expect(message).toMatch(/limit: [^;]*50/);
    expect(message).toContain("filters.site:");
    expect(message).toContain("extra");
    expect(scheduler.errors[0]!.code).toBe("action.bad-parameters");
  });

  it("an unknown tool name is unknown-executor with the list of tools", async () => {
    const { scheduler, log } = toolStep();
    await scheduler.submit(action("s", { name: "serch" }));
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      reason: "unknown-executor",
      message: expect.stringContaining("available: search"),
    });
  });

  it("direct execute with bad parameters rejects with a non-retryable SpoolError", async () => {
    const executor = createToolExecutor(createToolRegistry([search]));
    const call = {
      actionId: "x",
      type: "tool" as const,
      name: "search",
      parameters: {},
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => {},
    };
    await expect(executor.execute(call)).rejects.toSatisfy(
      (error) =>
        error instanceof SpoolError && error.code === "action.bad-parameters" && !error.retryable,
    );
  });

  it("refuses two tools of one name", () => {
    expect(() => createToolRegistry([search, search])).toThrow(ConfigError);
  });
});
