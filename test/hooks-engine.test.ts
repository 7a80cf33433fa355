// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hook files write ${event.…} templates in plain strings
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContextPressureHookPayload,
  createHookEngine,
  type HookEntry,
  type HookFiring,
  parseHookFile,
} from "../src/hooks/index.js";

/** Hooks from YAML, as a file of `tier` would give them. */
function hooks(text: string, tier: "project" | "builtin" = "project"): HookEntry[] {
  return parseHookFile(text, { path: `/x/${tier}.yaml`, tier });
}

const pressure = (ratio: number, thread = "t1"): ContextPressureHookPayload => ({
  tokens_used: Math.round(ratio * 1000),
  max_tokens: 1000,
  pressure_ratio: ratio,
  estimated: false,
  thread,
  directive: "assistant",
  summarizer: "thread_summary",
});

const compaction = hooks(`
- id: compact
  event: context_window_pressure
  condition: { path: pressure_ratio, op: gte, value: 0.8 }
  action:
    item_type: directive
    item_id: "\${event.summarizer}"
    params: { pressure_ratio: "\${event.pressure_ratio}", mode: precompute, thread: "t=\${event.thread}" }
`);

const fired = (firings: HookFiring[]) => firings.map((firing) => firing.hook);

describe("edge triggering", () => {
  it("fires when the condition turns true, not while it stays true, again after it was false", () => {
    const engine = createHookEngine({ hooks: compaction });
    const sequence = [0.5, 0.85, 0.9, 0.95, 0.4, 0.81, 0.82];
    expect(
      sequence.map((ratio) =>
        fired(engine.evaluate("context_window_pressure", pressure(ratio), "t1")),
      ),
    ).toEqual([[], ["compact"], [], [], [], ["compact"], []]);
  });

  it("renders the firing against the event", () => {
    const engine = createHookEngine({ hooks: compaction });
    expect(engine.evaluate("context_window_pressure", pressure(0.9), "t1")).toEqual([
      {
        hook: "compact",
        layer: 1,
        event: "context_window_pressure",
        action: { item_type: "directive", item_id: "thread_summary" },
        params: { pressure_ratio: 0.9, mode: "precompute", thread: "t=t1" },
      },
    ]);
  });

  it("keeps each scope apart, and reset forgets one scope only", () => {
    const engine = createHookEngine({ hooks: compaction });
    const at = (ratio: number, scope: string) =>
      fired(engine.evaluate("context_window_pressure", pressure(ratio, scope), scope));
    expect(at(0.9, "a")).toEqual(["compact"]);
    expect(at(0.9, "b")).toEqual(["compact"]);
    expect(at(0.9, "a")).toEqual([]);
    engine.reset("a");
    expect(at(0.9, "a")).toEqual(["compact"]);
    expect(at(0.9, "b")).toEqual([]);
    engine.reset("never-seen");
    expect(at(0.9, "b")).toEqual([]);
  });

  it("a hook without a condition fires once per scope on an edge-triggered event", () => {
    const engine = createHookEngine({
      hooks: hooks(
        "id: always\nevent: context_window_pressure\naction: { item_type: tool, item_id: x }\n",
      ),
    });
    expect(fired(engine.evaluate("context_window_pressure", pressure(0.1), "t"))).toEqual([
      "always",
    ]);
    expect(fired(engine.evaluate("context_window_pressure", pressure(0.9), "t"))).toEqual([]);
  });

  it("other events fire every time; the edge-triggered set is an option", () => {
    const entries = hooks(`
- id: on_limit
  event: limit
  action: { item_type: tool, item_id: spool.escalate, params: { limit: "\${event.limit}", max: "\${event.max}" } }
- id: compact
  event: context_window_pressure
  condition: { path: pressure_ratio, op: gte, value: 0.8 }
  action: { item_type: tool, item_id: x }
`);
    const limit = { limit: "max_turns", value: 10, max: 10, thread: "t" };
    const level = createHookEngine({ hooks: entries, edgeTriggered: [] });
    const edge = createHookEngine({ hooks: entries, edgeTriggered: ["limit"] });
    for (let i = 0; i < 2; i += 1) {
      expect(fired(level.evaluate("limit", limit, "t"))).toEqual(["on_limit"]);
      expect(fired(level.evaluate("context_window_pressure", pressure(0.9), "t"))).toEqual([
        "compact",
      ]);
    }
    expect(fired(edge.evaluate("limit", limit, "t"))).toEqual(["on_limit"]);
    expect(fired(edge.evaluate("limit", limit, "t"))).toEqual([]);
    expect(level.evaluate("limit", limit, "t")[0]?.params).toEqual({ limit: "max_turns", max: 10 });
  });
});

describe("ordering", () => {
  it("layer 1 first, then layer 2, each by id; other events and disabled entries left out", () => {
    const builtin = hooks(
      `
- { id: b_builtin, event: error, action: { item_type: tool, item_id: x } }
- { id: a_builtin, event: error, action: { item_type: tool, item_id: x } }
- { id: other, event: limit, action: { item_type: tool, item_id: x } }
`,
      "builtin",
    );
    const project = hooks(`
- { id: z_project, event: error, action: { item_type: tool, item_id: x } }
- { id: m_project, event: error, action: { item_type: tool, item_id: x } }
- { id: off, enabled: false, event: error, action: { item_type: tool, item_id: x } }
`);
    const engine = createHookEngine({ hooks: [...builtin, ...project] });
    const error = {
      error: { code: "e", message: "m", transient: false },
      thread: "t",
      step: 1,
      attempt: 1,
    };
    expect(fired(engine.evaluate("error", error, "t"))).toEqual([
      "m_project",
      "z_project",
      "a_builtin",
      "b_builtin",
    ]);
    expect(engine.evaluate("error", error, "t").map((firing) => firing.layer)).toEqual([
      1, 1, 2, 2,
    ]);
    expect(engine.hooks.map((hook) => hook.id)).toEqual([
      "m_project",
      "z_project",
      "a_builtin",
      "b_builtin",
      "other",
    ]);
  });

  it("conditions pick which hooks of an event fire", () => {
    const engine = createHookEngine({
      hooks: hooks(`
- id: retry
  event: error
  condition: { path: error.transient, op: eq, value: true }
  action: { item_type: tool, item_id: spool.retry, params: { attempt: "\${event.attempt}" } }
- id: fail
  event: error
  condition: { path: error.transient, op: ne, value: true }
  action: { item_type: tool, item_id: spool.fail }
`),
    });
    const error = (transient: boolean) => ({
      error: { code: "e", message: "m", transient },
      thread: "t",
      step: 3,
      attempt: 2,
    });
    expect(engine.evaluate("error", error(true), "t")).toMatchObject([
      { hook: "retry", params: { attempt: 2 } },
    ]);
    expect(fired(engine.evaluate("error", error(false), "t"))).toEqual(["fail"]);
  });
});

describe("determinism", () => {
  it("the same sequence of calls gives the same firings, and edges match a reference model", () => {
    const call = fc.record({
      scope: fc.constantFrom("a", "b"),
      ratio: fc.constantFrom(0.1, 0.79, 0.8, 0.95),
      reset: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(call, { maxLength: 30 }), (calls) => {
        const run = () => {
          const engine = createHookEngine({ hooks: compaction });
          return calls.map(({ scope, ratio, reset }) => {
            if (reset) engine.reset(scope);
            return fired(engine.evaluate("context_window_pressure", pressure(ratio, scope), scope));
          });
        };
        const held = new Map<string, boolean>();
        const expected = calls.map(({ scope, ratio, reset }) => {
          if (reset) held.delete(scope);
          const holds = ratio >= 0.8;
          const fires = holds && !held.get(scope);
          held.set(scope, holds);
          return fires ? ["compact"] : [];
        });
        const first = run();
        expect(first).toEqual(expected);
        expect(run()).toEqual(first);
      }),
    );
  });
});
