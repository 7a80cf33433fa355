import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { action, drain, handExecutor, lifecycle, setup } from "./support/actions-helpers.js";

describe("depends_on", () => {
  it("runs independent actions at once and a dependent only after all its dependencies succeed", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("a"));
    await scheduler.submit(action("b"));
    await scheduler.submit(action("c", { dependsOn: ["a", "b"] }));
    await drain();
    expect(tools.called()).toEqual(["a", "b"]);
    tools.last("a").resolve(1);
    await drain();
    expect(tools.called()).toEqual(["a", "b"]);
    tools.last("b").resolve(2);
    await drain();
    expect(tools.called()).toEqual(["a", "b", "c"]);
  });

  it("starts a dependent the instant its last dependency succeeds, with no timer involved", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a"));
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    await drain();
    tools.last("a").resolve("done");
    await drain();
    expect(tools.called()).toEqual(["a", "b"]);
    expect(lifecycle(log)).toEqual([
      "dispatched a",
      "started a",
      "succeeded a",
      "dispatched b",
      "started b",
    ]);
  });

  it("resolves forward references: a dependency written later is waited for", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("late-user", { dependsOn: ["producer"] }));
    await drain();
    expect(tools.called()).toEqual([]);
    await scheduler.submit(action("producer"));
    await drain();
    expect(tools.called()).toEqual(["producer"]);
    tools.last("producer").resolve(1);
    await drain();
    expect(tools.called()).toEqual(["producer", "late-user"]);
  });

  it("runs a chain in order and a diamond's join once", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("d", { dependsOn: ["b", "c"] }));
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    await scheduler.submit(action("c", { dependsOn: ["a"] }));
    await scheduler.submit(action("a"));
    await drain();
    tools.last("a").resolve(0);
    await drain();
    expect(tools.called()).toEqual(["a", "b", "c"]);
    tools.last("c").resolve(0);
    tools.last("b").resolve(0);
    await drain();
    expect(tools.called()).toEqual(["a", "b", "c", "d"]);
    tools.last("d").resolve(0);
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions.map((a) => `${a.id}:${a.status}`)).toEqual([
      "d:succeeded",
      "b:succeeded",
      "c:succeeded",
      "a:succeeded",
    ]);
  });

  it("reports every member of a cycle when the cycle closes, and skips their dependents", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a", { dependsOn: ["c"] }));
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    await scheduler.submit(action("outside", { dependsOn: ["b"] }));
    expect(log.ofType("action.skipped")).toEqual([]);
    await scheduler.submit(action("c", { dependsOn: ["b"] }));
    const skipped = log.ofType("action.skipped").map((e) => [e.data.action_id, e.data.reason]);
    expect(skipped).toEqual([
      ["c", "dependency-cycle"],
      ["b", "dependency-cycle"],
      ["a", "dependency-cycle"],
      ["outside", "dependency-failed"],
    ]);
    const cycleErrors = scheduler.errors.filter((e) => e.code === "action.dependency-cycle");
    expect(cycleErrors.map((e) => e.actionId)).toEqual(["c", "b", "a"]);
    expect(cycleErrors[0]!.cycle).toEqual(["c", "b", "a"]);
    expect(cycleErrors[0]!.message).toContain("c → b");
    expect(log.ofType("action.skipped").at(-1)!.data.cause_action).toBe("b");
    expect(tools.called()).toEqual([]);
  });

  it("keeps actions off the cycle that merely touch it, and runs unrelated work", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("free"));
    await scheduler.submit(action("x", { dependsOn: ["y", "free"] }));
    await scheduler.submit(action("y", { dependsOn: ["x"] }));
    const reasons = Object.fromEntries(
      log.ofType("action.skipped").map((e) => [e.data.action_id, e.data.reason]),
    );
    expect(reasons).toEqual({ y: "dependency-cycle", x: "dependency-cycle" });
    await drain();
    expect(tools.called()).toEqual(["free"]);
  });

  it("skips a self-dependency as such", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("me", { dependsOn: ["me"] }));
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      action_id: "me",
      reason: "self-dependency",
    });
    expect(scheduler.errors.map((e) => e.code)).toEqual(["action.self-dependency"]);
  });

  it("at end(), skips actions whose dependencies never appeared, and their dependents", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("waits", { dependsOn: ["ghost"] }));
    await scheduler.submit(action("after", { dependsOn: ["waits"] }));
    expect(log.ofType("action.skipped")).toEqual([]);
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions.map((a) => [a.id, a.status, a.reason])).toEqual([
      ["waits", "skipped", "dependency-missing"],
      ["after", "skipped", "dependency-failed"],
    ]);
    expect(outcome.errors).toHaveLength(1);
    expect(outcome.errors[0]).toMatchObject({
      code: "action.dependency-missing",
      actionId: "waits",
    });
    expect(outcome.errors[0]!.message).toContain('"ghost"');
    expect(tools.called()).toEqual([]);
  });

  it("prefers dependency-missing over dependency-failed when both apply", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a", { dependsOn: ["ghost1"] }));
    await scheduler.submit(action("b", { dependsOn: ["a", "ghost2"] }));
    scheduler.end();
    expect(log.ofType("action.skipped").map((e) => e.data.reason)).toEqual([
      "dependency-missing",
      "dependency-missing",
    ]);
  });

  it("reports a second action with a used id as a step error and does not run it", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a", { name: "first" }));
    await scheduler.submit(action("a", { name: "second" }));
    await drain();
    expect(tools.calls.map((c) => c.call.name)).toEqual(["first"]);
    expect(scheduler.errors.map((e) => e.code)).toEqual(["action.duplicate-id"]);
    expect(log.ofType("action.dispatched")).toHaveLength(1);
  });

  it("skips at once an action whose dependency already failed", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("a"));
    await drain();
    tools.last("a").reject(new Error("boom"));
    await drain();
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    expect(log.ofType("action.skipped")[0]!.data).toMatchObject({
      action_id: "b",
      reason: "dependency-failed",
      cause_action: "a",
    });
  });
});

describe("depends_on, any graph in any order (property)", () => {
  const TERMINAL = ["succeeded", "failed", "timed-out", "skipped", "cancelled"];
  const graph = fc.integer({ min: 1, max: 7 }).chain((n) =>
    fc.record({
      deps: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: n }), { maxLength: 3 }), {
        minLength: n,
        maxLength: n,
      }),
      order: fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
      fails: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
      resolveOrder: fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
    }),
  );

  it("runs exactly the actions whose dependencies all exist, form no cycle and succeed; each ends once", async () => {
    await fc.assert(
      fc.asyncProperty(graph, async ({ deps, order, fails, resolveOrder }) => {
        const n = deps.length;
        // Id `n` is never submitted: a dependency on it is a missing one.
        const id = (i: number) => `n${i}`;
        const reaches = (from: number, to: number): boolean => {
          const seen = new Set<number>();
          const stack = [...(deps[from] ?? [])];
          while (stack.length > 0) {
            const next = stack.pop()!;
            if (next === to) return true;
            if (next >= n || seen.has(next)) continue;
            seen.add(next);
            stack.push(...deps[next]!);
          }
          return false;
        };
        const memo = new Map<number, boolean>();
        const shouldRun = (i: number): boolean => {
          if (i >= n || reaches(i, i)) return false;
          if (!memo.has(i))
            memo.set(
              i,
              deps[i]!.every((d) => shouldRun(d) && !fails[d]),
            );
          return memo.get(i)!;
        };
        const tools = handExecutor();
        const { scheduler, log } = setup([tools.executor]);
        for (const i of order) {
          await scheduler.submit(action(id(i), { dependsOn: deps[i]!.map(id) }));
        }
        scheduler.end();
        let answered = 0;
        for (let k = 0; ; k++) {
          await drain();
          const open = tools.calls.filter((c) => !(c as { done?: boolean }).done);
          if (open.length === 0) break;
          const pick = open[(resolveOrder[k % resolveOrder.length] ?? 0) % open.length]!;
          (pick as { done?: boolean }).done = true;
          const i = Number(pick.call.actionId.slice(1));
          if (fails[i]) pick.reject(new Error("no"));
          else pick.resolve(i);
          answered++;
        }
        await scheduler.settled();
        const ran = new Set(tools.called());
        expect(answered).toBe(ran.size);
        const lines = lifecycle(log);
        for (let i = 0; i < n; i++) {
          expect(ran.has(id(i))).toBe(shouldRun(i));
          const terminal = lines.filter(
            (l) => l.endsWith(` ${id(i)}`) && TERMINAL.includes(l.split(" ")[0]!),
          );
          expect(terminal).toHaveLength(1);
          if (ran.has(id(i))) {
            const at = lines.indexOf(`dispatched ${id(i)}`);
            for (const d of deps[i]!) expect(lines.indexOf(`succeeded ${id(d)}`)).toBeLessThan(at);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
