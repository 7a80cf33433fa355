import { describe, expect, it } from "vitest";
import { action, drain, handExecutor, lifecycle, setup } from "./support/actions-helpers.js";

describe("cancel", () => {
  it("aborts running actions, cancels waiting ones, and stops waiting at once", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("running"));
    await scheduler.submit(action("waiting", { dependsOn: ["running"] }));
    await scheduler.submit(action("forward", { dependsOn: ["never-seen"] }));
    await drain();
    const { call } = tools.last("running");
    await scheduler.cancel("the user pressed stop");
    expect(call.signal.aborted).toBe(true);
    const cancelled = log.ofType("action.cancelled").map((e) => e.data.action_id);
    expect(cancelled).toEqual(["running", "waiting", "forward"]);
    expect(log.ofType("action.cancelled")[0]!.data.reason).toBe("the user pressed stop");
    expect(log.ofType("action.skipped")).toEqual([]);
    const outcome = await scheduler.settled();
    expect(outcome.cancelled).toBe(true);
    expect(outcome.actions.map((a) => a.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    tools.last("running").resolve("late");
    await drain();
    expect(log.ofType("action.succeeded")).toEqual([]);
    expect(tools.called()).toEqual(["running"]);
  });

  it("releases a sync hold when the step is cancelled", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    let released = false;
    const hold = scheduler.submit(action("s", { mode: "sync" })).then(() => {
      released = true;
    });
    await drain();
    expect(released).toBe(false);
    await scheduler.cancel("stop");
    await hold;
    expect(released).toBe(true);
  });

  it("leaves a started fire_and_forget action running; cancelDetached stops it", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("audit", { mode: "fire_and_forget" }));
    await scheduler.submit(action("queued-ff", { mode: "fire_and_forget", dependsOn: ["work"] }));
    await scheduler.submit(action("work"));
    await drain();
    await scheduler.cancel("stop");
    expect(lifecycle(log).filter((line) => line.startsWith("cancelled"))).toEqual([
      "cancelled queued-ff",
      "cancelled work",
    ]);
    expect(tools.last("audit").call.signal.aborted).toBe(false);
    await scheduler.cancelDetached("shutting down");
    expect(tools.last("audit").call.signal.aborted).toBe(true);
    expect(lifecycle(log).at(-1)).toBe("cancelled audit");
    await scheduler.idle();
  });

  it("cancels an action submitted after the step was cancelled, without running it", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.cancel("stop");
    await scheduler.submit(action("late"));
    await drain();
    expect(tools.called()).toEqual([]);
    expect(lifecycle(log)).toEqual(["cancelled late"]);
  });

  it("records duration_ms for an action that had started", async () => {
    const tools = handExecutor();
    let now = 0;
    const { scheduler, log } = setup([tools.executor], {
      clock: { now: () => now, setTimer: () => () => {} },
    });
    await scheduler.submit(action("a"));
    await drain();
    now = 42;
    await scheduler.cancel("stop");
    expect(log.ofType("action.cancelled")[0]!.data.duration_ms).toBe(42);
  });
});
