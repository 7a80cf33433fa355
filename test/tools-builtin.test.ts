import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createMemoryActionLog,
  createStepScheduler,
  createToolExecutor,
  createToolRegistry,
  createVariableStore,
} from "../src/actions/index.js";
import { ConfigError } from "../src/spec/index.js";
import {
  BUILTIN_TOOL_NAMES,
  builtinTools,
  formatToolCatalogue,
  toolCatalogue,
  zonedTime,
} from "../src/tools/index.js";
import { action } from "./support/actions-helpers.js";

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-builtin-"));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("builtinTools", () => {
  it("returns every built-in tool, in BUILTIN_TOOL_NAMES order, with side effects declared", () => {
    const tools = builtinTools({ workspace });
    expect(tools.map((tool) => tool.name)).toEqual([...BUILTIN_TOOL_NAMES]);
    const flags = Object.fromEntries(
      tools.map((tool) => [tool.name, [tool.idempotent === true, tool.sideEffects === true]]),
    );
    expect(flags).toEqual({
      "fs.read": [true, false],
      "fs.list": [true, false],
      "fs.search": [true, false],
      "fs.write": [false, true],
      "http.fetch": [false, true],
      "shell.run": [false, true],
      "clock.now": [true, false],
    });
  });

  it("refuses bad configuration with a ConfigError naming the setting", () => {
    expect(() => builtinTools({ workspace: " " })).toThrow(ConfigError);
    expect(() => builtinTools({ workspace, limits: { readBytes: 0 } })).toThrow(
      /tools.limits.readBytes/,
    );
  });
});

describe("through the tool executor and the scheduler", () => {
  function step() {
    const log = createMemoryActionLog();
    const scheduler = createStepScheduler({
      log,
      variables: createVariableStore(),
      executors: [createToolExecutor(createToolRegistry(builtinTools({ workspace })))],
    });
    return { log, scheduler };
  }

  it("writes then reads a file as two logged actions", async () => {
    const { log, scheduler } = step();
    await scheduler.submit(
      action("w", {
        mode: "sync",
        name: "fs.write",
        parameters: { path: "notes/today.md", content: "# Today\n" },
      }),
    );
    await scheduler.submit(
      action("r", { mode: "sync", name: "fs.read", parameters: { path: "notes/today.md" } }),
    );
    const outputs = log.ofType("action.succeeded").map((entry) => entry.data.output);
    expect(outputs).toEqual([
      { path: "notes/today.md", mode: "create", bytes: 8, created: true },
      {
        path: "notes/today.md",
        size: 8,
        offset: 0,
        content: "# Today\n",
        truncated: false,
        nextOffset: null,
      },
    ]);
  });

  it("logs a refusal with its code and hint, and bad parameters as a skip", async () => {
    const { log, scheduler } = step();
    await scheduler.submit(
      action("out", { mode: "sync", name: "fs.read", parameters: { path: "../x" } }),
    );
    await scheduler.submit(
      action("bad", { mode: "sync", name: "fs.read", parameters: { file: "x" } }),
    );
    expect(log.ofType("action.failed")[0]!.data.error).toMatchObject({
      code: "tool.path-outside-workspace",
      retryable: false,
      message: expect.stringContaining("Use a path relative to the workspace root"),
    });
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      reason: "bad-parameters",
      message: expect.stringContaining('bad parameters for tool "fs.read"'),
    });
  });
});

describe("clock.now", () => {
  const instant = new Date("2025-03-01T08:30:05.123Z");

  it("reads the injected clock, in the zone asked for", async () => {
    const clock = builtinTools({ workspace, clock: () => instant }).find(
      (tool) => tool.name === "clock.now",
    )!;
    expect(
      await clock.execute(clock.parameters.parse({ timezone: "Asia/Kolkata" }), undefined as never),
    ).toEqual({
      iso: "2025-03-01T14:00:05.123+05:30",
      utc: "2025-03-01T08:30:05.123Z",
      epochMs: instant.getTime(),
      timezone: "Asia/Kolkata",
      weekday: "Saturday",
    });
  });

  it("uses the configured zone by default and handles negative offsets", () => {
    const clock = builtinTools({
      workspace,
      clock: () => instant,
      timezone: "America/New_York",
    }).find((tool) => tool.name === "clock.now")!;
    expect(clock.execute({}, undefined as never)).toMatchObject({
      iso: "2025-03-01T03:30:05.123-05:00",
      timezone: "America/New_York",
    });
    expect(zonedTime(instant, "UTC").iso).toBe("2025-03-01T08:30:05.123+00:00");
  });

  it("refuses an unknown zone with a typed error", () => {
    expect(() => zonedTime(instant, "Mars/Olympus")).toThrow(
      expect.objectContaining({ code: "tool.bad-timezone" }),
    );
  });
});

describe("toolCatalogue", () => {
  it("describes each tool with its JSON Schema and flags", () => {
    const catalogue = toolCatalogue(builtinTools({ workspace }));
    const read = catalogue.find((entry) => entry.name === "fs.read")!;
    expect(read).toMatchObject({ idempotent: true, sideEffects: false });
    expect(read.parameters).toMatchObject({
      type: "object",
      required: ["path"],
      additionalProperties: false,
      properties: { path: { type: "string", description: expect.stringContaining("relative") } },
    });
    expect(read.parameters).not.toHaveProperty("$schema");
    const write = catalogue.find((entry) => entry.name === "fs.write")!;
    // The input side: a field with a default is optional to the model.
    expect(write.parameters.required).toEqual(["path", "content"]);
  });

  it("renders compact text for a system prompt", () => {
    const text = formatToolCatalogue(builtinTools({ workspace }));
    expect(text).toContain("fs.write (side effects, not idempotent): Writes text");
    expect(text).toContain("clock.now (read-only, idempotent):");
    expect(text.split("\n\n")).toHaveLength(BUILTIN_TOOL_NAMES.length);
  });
});
