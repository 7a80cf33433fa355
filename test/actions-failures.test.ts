import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { backoffDelay, DEFAULT_BACKOFF } from "../src/actions/index.js";
import { SpoolError } from "../src/spec/index.js";
import { action, drain, handExecutor, lifecycle, setup } from "./support/actions-helpers.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("on_error", () => {
  it("fail (the default): action.failed, and dependents are skipped transitively", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a"));
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    await scheduler.submit(action("c", { dependsOn: ["b"] }));
    await scheduler.submit(action("d", { dependsOn: ["c"] }));
    await drain();
    tools.last("a").reject(new Error("disk full"));
    await drain();
    expect(lifecycle(log)).toEqual([
      "dispatched a",
      "started a",
      "failed a",
      "skipped b",
      "skipped c",
      "skipped d",
    ]);
    const skipped = log
      .ofType("action.skipped")
      .map((e) => [e.data.action_id, e.data.cause_action]);
    expect(skipped).toEqual([
      ["b", "a"],
      ["c", "b"],
      ["d", "c"],
    ]);
    expect(log.ofType("action.failed")[0]!.data.error).toEqual({
      code: "action.error",
      message: "disk full",
    });
    expect(tools.called()).toEqual(["a"]);
  });

  it("keeps a SpoolError's code and retryable flag", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a"));
    await drain();
    tools.last("a").reject(new SpoolError("tool.quota", "quota used up", { retryable: false }));
    await drain();
    expect(log.ofType("action.failed")[0]!.data.error).toEqual({
      code: "tool.quota",
      message: "quota used up",
      retryable: false,
    });
  });

  it("skip: records the failure as action.skipped on-error-skip and lets dependents run", async () => {
    const tools = handExecutor();
    const { scheduler, log, variables } = setup([tools.executor]);
    await scheduler.submit(action("best-effort", { onError: "skip", outputKey: "extra" }));
    await scheduler.submit(
      action("next", { dependsOn: ["best-effort"], parameters: { value: "$extra" } }),
    );
    await drain();
    tools.last("best-effort").reject(new Error("no luck"));
    await drain();
    expect(log.ofType("action.failed")).toEqual([]);
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      action_id: "best-effort",
      reason: "on-error-skip",
    });
    expect(log.ofType("action.skipped")[0]!.data.message).toContain("no luck");
    expect(tools.last("next").call.parameters).toEqual({ value: "$extra" });
    expect(variables.has("extra")).toBe(false);
    tools.last("next").resolve("ok");
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions.map((a) => a.status)).toEqual(["skipped", "succeeded"]);
    expect(outcome.actions[0]!.error?.message).toBe("no luck");
  });

  it("retry: N further attempts with exponential backoff, each logged as action.retrying", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor], { random: () => 0 });
    await scheduler.submit(action("flaky", { retry: 3 }));
    await drain();
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(tools.calls).toHaveLength(attempt);
      expect(tools.last("flaky").call.attempt).toBe(attempt);
      tools.last("flaky").reject(new Error(`try ${attempt}`));
      await drain();
      const delay = log.ofType("action.retrying").at(-1)!.data.delay_ms;
      expect(delay).toBe(250 * 2 ** (attempt - 1));
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(tools.calls).toHaveLength(attempt);
      await vi.advanceTimersByTimeAsync(1);
    }
    tools.last("flaky").resolve("finally");
    await drain();
    expect(lifecycle(log)).toEqual([
      "dispatched flaky",
      "started flaky",
      "retrying flaky",
      "started flaky",
      "retrying flaky",
      "started flaky",
      "retrying flaky",
      "started flaky",
      "succeeded flaky",
    ]);
    expect(log.ofType("action.succeeded")[0]!.data).toMatchObject({
      attempt: 4,
      output: "finally",
    });
  });

  it("gives up after the last retry with action.failed", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("flaky", { retry: 1 }));
    await drain();
    tools.last("flaky").reject(new Error("one"));
    await vi.advanceTimersByTimeAsync(250);
    tools.last("flaky").reject(new Error("two"));
    await drain();
    expect(log.ofType("action.failed")[0]!.data).toMatchObject({
      attempt: 2,
      error: { message: "two" },
    });
  });

  it("on_error retry with retry 0 uses the default of 3 retries", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("x", { onError: "retry" }));
    for (let i = 0; i < 4; i++) {
      await drain();
      tools.last("x").reject(new Error("no"));
      await vi.advanceTimersByTimeAsync(10_000);
    }
    await drain();
    expect(tools.calls).toHaveLength(4);
    expect(log.ofType("action.failed")[0]!.data.attempt).toBe(4);
  });

  it("does not retry a SpoolError that says it is not retryable", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("x", { retry: 5 }));
    await drain();
    tools.last("x").reject(new SpoolError("tool.bad-key", "the API key was refused"));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tools.calls).toHaveLength(1);
    expect(log.ofType("action.retrying")).toEqual([]);
    expect(log.ofType("action.failed")).toHaveLength(1);
  });

  it("cancelling during a backoff wait stops the retries", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("x", { retry: 2 }));
    await drain();
    tools.last("x").reject(new Error("no"));
    await drain();
    await scheduler.cancel("user stopped");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tools.calls).toHaveLength(1);
    expect(lifecycle(log).at(-1)).toBe("cancelled x");
  });
});

describe("backoff", () => {
  it("doubles from 250 ms, caps at 10 s, and jitter removes at most half", () => {
    const none = () => 0;
    expect([1, 2, 3, 4, 6, 10].map((n) => backoffDelay(n, DEFAULT_BACKOFF, none))).toEqual([
      250, 500, 1000, 2000, 8000, 10_000,
    ]);
    expect(backoffDelay(1, DEFAULT_BACKOFF, () => 0.999999)).toBe(125);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(750);
  });
});

describe("timeout", () => {
  it("aborts the attempt's signal and records action.timed-out, even if the executor ignores it", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("slow", { timeoutMs: 1000, outputKey: "slow" }));
    await scheduler.submit(action("after", { dependsOn: ["slow"] }));
    await drain();
    const { call } = tools.last("slow");
    await vi.advanceTimersByTimeAsync(999);
    expect(call.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(call.signal.aborted).toBe(true);
    expect(log.ofType("action.timed-out")[0]!.data).toEqual({
      action_id: "slow",
      attempt: 1,
      timeout_ms: 1000,
      duration_ms: 1000,
      will_retry: false,
    });
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      action_id: "after",
      reason: "dependency-failed",
      cause_action: "slow",
    });
    tools.last("slow").resolve("too late");
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions[0]!.status).toBe("timed-out");
    expect(log.ofType("action.succeeded")).toEqual([]);
  });

  it("is per attempt: a timed-out attempt is retried when retries are left", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("slow", { timeoutMs: 100, retry: 1 }));
    await drain();
    await vi.advanceTimersByTimeAsync(100);
    expect(log.ofType("action.timed-out")[0]!.data.will_retry).toBe(true);
    expect(log.ofType("action.retrying")[0]!.data.error.code).toBe("action.timeout");
    await vi.advanceTimersByTimeAsync(250);
    expect(tools.calls).toHaveLength(2);
    tools.last("slow").resolve(1);
    await drain();
    expect(lifecycle(log)).toEqual([
      "dispatched slow",
      "started slow",
      "timed-out slow",
      "retrying slow",
      "started slow",
      "succeeded slow",
    ]);
  });

  it("with on_error skip, a final timeout is one action.skipped and dependents run", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("slow", { timeoutMs: 100, onError: "skip" }));
    await scheduler.submit(action("after", { dependsOn: ["slow"] }));
    await drain();
    await vi.advanceTimersByTimeAsync(100);
    expect(lifecycle(log)).toEqual([
      "dispatched slow",
      "started slow",
      "skipped slow",
      "dispatched after",
      "started after",
    ]);
    expect(log.ofType("action.skipped")[0]!.data.message).toContain("timeout");
  });
});
