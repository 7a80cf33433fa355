import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createInternalExecutor,
  createMemoryActionLog,
  createStepScheduler,
  createVariableStore,
  defineInternalAction,
  type InternalActionsPolicy,
  internalVariableActions,
} from "../src/actions/index.js";
import { ConfigError } from "../src/spec/index.js";
import { action, drain, lifecycle } from "./support/actions-helpers.js";

const ping = defineInternalAction({
  name: "ping",
  description: "Answers pong.",
  parameters: z.strictObject({ times: z.number().int().min(1).default(1) }),
  run: ({ times }) => "pong".repeat(times),
});

function internalStep(policy?: InternalActionsPolicy) {
  const log = createMemoryActionLog();
  const variables = createVariableStore();
  const internal = createInternalExecutor({
    actions: [...internalVariableActions(), ping],
    variables,
    log,
    ...(policy ? { policy } : {}),
  });
  const scheduler = createStepScheduler({ log, variables, executors: [internal] });
  return { log, variables, scheduler };
}

const call = (id: string, name: string, parameters: Record<string, unknown> = {}) =>
  action(id, { type: "internal", name, parameters, mode: "sync" });

describe("internal actions", () => {
  it("runs an allowed action with parsed parameters", async () => {
    const { scheduler, log } = internalStep();
    await scheduler.submit(call("p", "ping", { times: 2 }));
    expect(log.ofType("action.succeeded")[0]!.data.output).toBe("pongpong");
  });

  it("set_variable and delete_variable change $variables and record variable events", async () => {
    const { scheduler, log, variables } = internalStep();
    await scheduler.submit(call("s", "set_variable", { name: "city", value: { name: "Oslo" } }));
    expect(variables.lookup("city")).toEqual({ value: { name: "Oslo" } });
    await scheduler.submit(call("use", "ping", { times: "$city.name" }));
    expect(log.ofType("action.skipped")[0]!.data.reason).toBe("bad-parameters");
    await scheduler.submit(call("d", "delete_variable", { name: "city" }));
    expect(variables.has("city")).toBe(false);
    await scheduler.submit(call("d2", "delete_variable", { name: "city" }));
    expect(log.ofType("action.succeeded").at(-1)!.data.output).toEqual({
      name: "city",
      existed: false,
    });
    const changes = log.entries.filter((e) => e.type.startsWith("variable."));
    expect(changes).toEqual([
      {
        type: "variable.set",
        data: { name: "city", value: { name: "Oslo" }, by: "action", action_id: "s" },
      },
      { type: "variable.deleted", data: { name: "city", by: "action", action_id: "d" } },
    ]);
  });

  it("refuses a bad variable name with the field path", async () => {
    const { scheduler, log } = internalStep();
    await scheduler.submit(call("s", "set_variable", { name: "9lives", value: 1 }));
    const skipped = log.ofType("action.skipped")[0]!.data;
    expect(skipped.reason).toBe("bad-parameters");
    expect(skipped.message).toContain("name: must be a variable name");
    expect(log.ofType("action.dispatched")).toEqual([]);
  });

  it("a blocked action is an action.skipped not-allowed, never a silent no-op", async () => {
    const { scheduler, log, variables } = internalStep({
      enabled: true,
      blocked_actions: ["set_variable"],
    });
    await scheduler.submit(call("s", "set_variable", { name: "x", value: 1 }));
    expect(lifecycle(log)).toEqual(["skipped s"]);
    expect(log.ofType("action.skipped")[0]!.data.reason).toBe("not-allowed");
    expect(log.ofType("action.skipped")[0]!.data.message).toContain("blocked_actions");
    expect(variables.has("x")).toBe(false);
    expect(scheduler.errors.map((e) => e.code)).toEqual(["action.not-allowed"]);
  });

  it("allowed_actions allows only the listed actions", async () => {
    const { scheduler, log } = internalStep({ enabled: true, allowed_actions: ["ping"] });
    await scheduler.submit(call("p", "ping"));
    await scheduler.submit(call("s", "set_variable", { name: "x", value: 1 }));
    expect(lifecycle(log)).toEqual(["dispatched p", "started p", "succeeded p", "skipped s"]);
    expect(log.ofType("action.skipped")[0]!.data.message).toContain("allowed: ping");
  });

  it("enabled: false refuses every internal action", async () => {
    const { scheduler, log } = internalStep({ enabled: false });
    await scheduler.submit(call("p", "ping"));
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      action_id: "p",
      reason: "not-allowed",
    });
  });

  it("accepts the camelCase policy src/feeds parses the manifest into", async () => {
    const { scheduler, log } = internalStep({ enabled: true, blockedActions: ["ping"] });
    await scheduler.submit(call("p", "ping"));
    expect(log.ofType("action.skipped")[0]!.data.reason).toBe("not-allowed");
  });

  it("an unknown internal action is unknown-executor, listing what exists", async () => {
    const { scheduler, log } = internalStep();
    await scheduler.submit(call("x", "launch_rocket"));
    const data = log.ofType("action.skipped")[0]!.data;
    expect(data.reason).toBe("unknown-executor");
    expect(data.message).toContain("set_variable, delete_variable, ping");
  });

  it("rejects a policy naming actions that do not exist, or with unknown fields", () => {
    const base = {
      actions: [ping],
      variables: createVariableStore(),
      log: createMemoryActionLog(),
    };
    expect(() =>
      createInternalExecutor({ ...base, policy: { enabled: true, allowed_actions: ["pnig"] } }),
    ).toThrow(ConfigError);
    expect(() =>
      createInternalExecutor({
        ...base,
        policy: { enabled: true, allow: ["ping"] } as unknown as InternalActionsPolicy,
      }),
    ).toThrow(/allow/);
  });

  it("a missing type has no executor: unknown-executor names the available types", async () => {
    const { scheduler, log } = internalStep();
    await scheduler.submit(action("t", { type: "agent", name: "helper" }));
    await drain();
    expect(log.ofType("action.skipped")[0]!.data.message).toContain("available types: internal");
  });
});
