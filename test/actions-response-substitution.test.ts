import { describe, expect, it } from "vitest";
import {
  createResponseSubstituter,
  createVariableStore,
  type SubstitutionPiece,
} from "../src/actions/index.js";
import { action, drain, handExecutor, setup } from "./support/actions-helpers.js";

/** Collects pieces in order, resolving held ones; `ready` is what could be shown so far. */
function collector() {
  const pieces: SubstitutionPiece[] = [];
  let ready = "";
  let blocked = false;
  const advance = async () => {
    // Emits in order, stopping at the first piece still pending.
    while (pieces.length > 0) {
      const head = pieces[0]!;
      if (typeof head === "string") {
        ready += head;
        void pieces.shift();
        continue;
      }
      let value: string | undefined;
      void head.then((text) => {
        value = text;
      });
      await drain();
      if (value === undefined) {
        blocked = true;
        return;
      }
      ready += value;
      void pieces.shift();
    }
    blocked = false;
  };
  return {
    add: async (more: SubstitutionPiece[]) => {
      pieces.push(...more);
      await advance();
    },
    advance,
    get ready() {
      return ready;
    },
    get blocked() {
      return blocked;
    },
  };
}

describe("response substitution", () => {
  it("streams plain text untouched and substitutes known variables at once", async () => {
    const variables = createVariableStore({ initial: { name: "Ada" } });
    const sub = createResponseSubstituter({ variables });
    const out = collector();
    await out.add(sub.push("Hello "));
    expect(out.ready).toBe("Hello ");
    await out.add(sub.push("$name, costs $5 and $unknown."));
    await out.add(sub.end());
    expect(out.ready).toBe("Hello Ada, costs $5 and $unknown.");
  });

  it("holds a reference split across deltas until it is decided", async () => {
    const variables = createVariableStore({ initial: { user: { name: "Ada" } } });
    const sub = createResponseSubstituter({ variables });
    const out = collector();
    await out.add(sub.push("Hi $us"));
    expect(out.ready).toBe("Hi ");
    await out.add(sub.push("er."));
    expect(out.ready).toBe("Hi ");
    await out.add(sub.push("name!"));
    expect(out.ready).toBe("Hi Ada!");
    await out.add(sub.push(" and $"));
    expect(out.ready).toBe("Hi Ada! and ");
    await out.add(sub.end());
    expect(out.ready).toBe("Hi Ada! and $");
  });

  it("holds back a reference, and all text after it, while its action runs", async () => {
    const tools = handExecutor();
    const { scheduler, variables } = setup([tools.executor]);
    await scheduler.submit(action("fetch", { outputKey: "weather" }));
    const sub = createResponseSubstituter({
      variables,
      pending: (name) => scheduler.pendingOutput(name),
    });
    const out = collector();
    await out.add(sub.push("Today: $weather.sky, then "));
    await out.add(sub.push("more text"));
    expect(out.ready).toBe("Today: ");
    expect(out.blocked).toBe(true);
    tools.last("fetch").resolve({ sky: "sunny" });
    await drain();
    await out.advance();
    expect(out.ready).toBe("Today: sunny, then more text");
  });

  it("leaves the reference literal when the action fails", async () => {
    const tools = handExecutor();
    const { scheduler, variables } = setup([tools.executor]);
    await scheduler.submit(action("fetch", { outputKey: "weather" }));
    const sub = createResponseSubstituter({
      variables,
      pending: (name) => scheduler.pendingOutput(name),
    });
    const out = collector();
    await out.add(sub.push("Sky: $weather. ok"));
    expect(out.ready).toBe("Sky: ");
    tools.last("fetch").reject(new Error("offline"));
    await drain();
    await out.advance();
    expect(out.ready).toBe("Sky: $weather. ok");
  });

  it("waits for the pending action even when an older value exists, then shows the new one", async () => {
    const tools = handExecutor();
    const { scheduler, variables } = setup([tools.executor]);
    variables.set("n", 1);
    await scheduler.submit(action("count", { outputKey: "n" }));
    const sub = createResponseSubstituter({
      variables,
      pending: (name) => scheduler.pendingOutput(name),
    });
    const out = collector();
    await out.add(sub.push("n=$n"));
    await out.add(sub.end());
    expect(out.ready).toBe("n=");
    tools.last("count").resolve(2);
    await drain();
    await out.advance();
    expect(out.ready).toBe("n=2");
  });

  it("does not hold for a fire_and_forget action's output", async () => {
    const tools = handExecutor();
    const { scheduler, variables } = setup([tools.executor]);
    await scheduler.submit(action("ff", { mode: "fire_and_forget", outputKey: "x" }));
    const sub = createResponseSubstituter({
      variables,
      pending: (name) => scheduler.pendingOutput(name),
    });
    const out = collector();
    await out.add(sub.push("x=$x "));
    expect(out.ready).toBe("x=$x ");
  });

  it("a split escape stays an escape", async () => {
    const sub = createResponseSubstituter({
      variables: createVariableStore({ initial: { a: 1 } }),
    });
    const out = collector();
    await out.add(sub.push("$"));
    await out.add(sub.push("$a $"));
    await out.add(sub.push("a"));
    await out.add(sub.end());
    expect(out.ready).toBe("$a 1");
  });
});
