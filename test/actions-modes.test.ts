import { describe, expect, it } from "vitest";
import { createMemoryActionLog, createVariableStore, runStep } from "../src/actions/index.js";
import {
  act,
  action,
  consume,
  drain,
  handExecutor,
  lifecycle,
  manualOutput,
  setup,
} from "./support/actions-helpers.js";

describe("modes (scheduler)", () => {
  it("sync: submit resolves only when the action has ended and its result is logged", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    let released = false;
    const hold = scheduler.submit(action("s", { mode: "sync" })).then(() => {
      released = true;
    });
    await drain();
    expect(tools.called()).toEqual(["s"]);
    expect(released).toBe(false);
    tools.last("s").resolve("ok");
    await hold;
    expect(lifecycle(log).at(-1)).toBe("succeeded s");
  });

  it("async: submit resolves at once, and settled() waits for the action", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("a", { mode: "async" }));
    scheduler.end();
    let settled = false;
    const done = scheduler.settled().then(() => {
      settled = true;
    });
    await drain();
    expect(settled).toBe(false);
    tools.last("a").resolve(1);
    await done;
    expect(settled).toBe(true);
  });

  it("fire_and_forget: not waited for, not reported, but fully logged on its task stream", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(action("ff", { mode: "fire_and_forget" }));
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions).toEqual([]);
    expect(tools.called()).toEqual(["ff"]);
    let idle = false;
    const waiting = scheduler.idle().then(() => {
      idle = true;
    });
    await drain();
    expect(idle).toBe(false);
    tools.last("ff").resolve("logged");
    await waiting;
    expect(lifecycle(log)).toEqual(["dispatched ff", "started ff", "succeeded ff"]);
    expect(log.entries.every((entry) => entry.task === "ff")).toBe(true);
  });

  it("a sync action waiting for an id not yet seen does not hold (that id could never arrive)", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("s", { mode: "sync", dependsOn: ["later"] }));
    await scheduler.submit(action("later"));
    await drain();
    tools.last("later").resolve(1);
    await drain();
    expect(tools.called()).toEqual(["later", "s"]);
  });

  it("nor does one that waits for an unseen id through a seen dependency", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("middle", { dependsOn: ["later"] }));
    await scheduler.submit(action("s", { mode: "sync", dependsOn: ["middle"] }));
    await scheduler.submit(action("later"));
    await drain();
    expect(tools.called()).toEqual(["later"]);
  });

  it("a sync action waiting on a seen action holds until both have run", async () => {
    const tools = handExecutor();
    const { scheduler } = setup([tools.executor]);
    await scheduler.submit(action("first"));
    let released = false;
    const hold = scheduler.submit(action("s", { mode: "sync", dependsOn: ["first"] })).then(() => {
      released = true;
    });
    await drain();
    tools.last("first").resolve(1);
    await drain();
    expect(released).toBe(false);
    tools.last("s").resolve(2);
    await hold;
    expect(released).toBe(true);
  });
});

describe("modes (step runner, real parser)", () => {
  const step = (tools: ReturnType<typeof handExecutor>) => {
    const output = manualOutput();
    const log = createMemoryActionLog();
    const run = runStep({
      output,
      log,
      variables: createVariableStore(),
      executors: [tools.executor],
    });
    return { output, log, out: consume(run) };
  };

  it("sync: output after the action, even from the same chunk, waits until it has ended", async () => {
    const tools = handExecutor();
    const { output, out } = step(tools);
    output.push(`${act("s", "sync", { name: "t", parameters: {} })}<thought>after</thought>`);
    output.push(act("next", "async", { name: "t", parameters: {} }));
    await tools.arrival("s");
    await drain();
    expect(out.text("thought")).toBe("");
    expect(tools.called()).toEqual(["s"]);
    tools.last("s").resolve("ok");
    await tools.arrival("next");
    expect(out.text("thought")).toBe("after");
    output.close();
    tools.last("next").resolve("ok");
    await out.done;
  });

  it("async: later output goes through while it runs, and the step's end waits for it", async () => {
    const tools = handExecutor();
    const { output, out } = step(tools);
    output.push(`${act("a", "async", { name: "t", parameters: {} })}<thought>after</thought>`);
    output.close();
    await tools.arrival("a");
    await drain();
    expect(out.text("thought")).toBe("after");
    expect(out.kinds()).not.toContain("step-end");
    tools.last("a").resolve("ok");
    await out.done;
    expect(out.kinds().at(-1)).toBe("step-end");
  });

  it("fire_and_forget: the step ends while it still runs; it is logged anyway", async () => {
    const tools = handExecutor();
    const { output, out, log } = step(tools);
    output.push(
      `${act("ff", "fire_and_forget", { name: "t", parameters: {} })}<thought>after</thought>`,
    );
    output.close();
    await out.done;
    const end = out.events.at(-1)!;
    expect(end.type === "step-end" && end.summary.actions).toEqual([]);
    expect(tools.called()).toEqual(["ff"]);
    tools.last("ff").resolve("later");
    await drain();
    expect(lifecycle(log)).toEqual(["dispatched ff", "started ff", "succeeded ff"]);
  });
});
