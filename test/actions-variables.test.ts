import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createVariableStore,
  substituteParameters,
  substituteString,
  substituteText,
} from "../src/actions/index.js";
import { action, drain, handExecutor, setup } from "./support/actions-helpers.js";

const variables = createVariableStore({
  initial: {
    user: { profile: { name: "Ada", age: 36 }, tags: ["a", "b"] },
    rows: [{ id: 7 }, { id: 8 }],
    count: 3,
    file: "report",
    nothing: null,
    flag: true,
  },
});

describe("$ substitution in parameters", () => {
  it("a whole-string reference keeps the value's type", () => {
    expect(substituteString("$user", variables)).toEqual({
      profile: { name: "Ada", age: 36 },
      tags: ["a", "b"],
    });
    expect(substituteString("$count", variables)).toBe(3);
    expect(substituteString("$nothing", variables)).toBeNull();
    expect(substituteString("$flag", variables)).toBe(true);
    expect(substituteString("$user.profile.age", variables)).toBe(36);
    expect(substituteString("$rows[1]", variables)).toEqual({ id: 8 });
    expect(substituteString("$rows[0].id", variables)).toBe(7);
    expect(substituteString("$user.tags[1]", variables)).toBe("b");
  });

  it("embedded references interpolate as text, objects as JSON", () => {
    expect(substituteText("hi $user.profile.name!", variables)).toBe("hi Ada!");
    expect(substituteText("n=$count;", variables)).toBe("n=3;");
    expect(substituteText("row: $rows[0]", variables)).toBe('row: {"id":7}');
    expect(substituteText("$count$count", variables)).toBe("33");
  });

  it("unknown names and unresolvable paths stay literal", () => {
    expect(substituteString("$missing", variables)).toBe("$missing");
    expect(substituteText("a $missing.x b", variables)).toBe("a $missing.x b");
    expect(substituteString("$rows[5].id", variables)).toBe("$rows[5].id");
    expect(substituteString("$user.profile.nmae", variables)).toBe("$user.profile.nmae");
    expect(substituteString("$rows.id", variables)).toBe("$rows.id");
    expect(substituteString("$user[0]", variables)).toBe("$user[0]");
  });

  it("a path stops at a plain value: the rest is text", () => {
    expect(substituteString("$file.txt", variables)).toBe("report.txt");
    expect(substituteText("Hello $user.profile.name.", variables)).toBe("Hello Ada.");
  });

  it("$ before a digit or a symbol is not a reference; $$name escapes", () => {
    expect(substituteText("costs $5 or $ 6 or $", variables)).toBe("costs $5 or $ 6 or $");
    expect(substituteText("literal $$count and $$5", variables)).toBe("literal $count and $$5");
    expect(substituteString("$$count", variables)).toBe("$count");
  });

  it("reads only own properties", () => {
    expect(substituteString("$user.constructor", variables)).toBe("$user.constructor");
    expect(substituteString("$user.__proto__", variables)).toBe("$user.__proto__");
  });

  it("substitutes at any depth of parameters, never keys, and does not modify the input", () => {
    const input = { q: "$user.profile.name", list: ["$count", { deep: "x $flag" }], $count: 1 };
    const out = substituteParameters(input, variables);
    expect(out).toEqual({ q: "Ada", list: [3, { deep: "x true" }], $count: 1 });
    expect(input.q).toBe("$user.profile.name");
    const same = { a: "plain", b: [1, 2] };
    expect(substituteParameters(same, variables)).toBe(same);
  });

  it("substituted values are not scanned again", () => {
    const store = createVariableStore({ initial: { a: "$b", b: "secret" } });
    expect(substituteText("x $a", store)).toBe("x $b");
  });

  it("freezes stored values, so an executor cannot change a variable through a parameter", () => {
    const store = createVariableStore({ initial: { obj: { n: 1 } } });
    const value = substituteString("$obj", store) as { n: number };
    expect(() => {
      value.n = 2;
    }).toThrow();
  });

  it("never throws, and leaves text without a resolvable reference unchanged", () => {
    const value = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: "small" },
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("json"), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 5 }), tie("json"), { maxKeys: 3 }),
      ),
    })).json;
    const text = fc.oneof(
      fc.string(),
      fc
        .array(
          fc.constantFrom("$", "$$", "a", "user", ".", "[", "]", "0", "12", "_", " ", "$user"),
          {
            maxLength: 20,
          },
        )
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(
        text,
        fc.dictionary(fc.constantFrom("a", "user", "_", "x1"), value),
        (s, vars) => {
          const store = createVariableStore({ initial: vars });
          const out = substituteText(s, store);
          expect(typeof out).toBe("string");
          substituteString(s, store);
          substituteParameters({ s, nested: [s, { s }] }, store);
          if (!s.includes("$")) expect(out).toBe(s);
          expect(substituteText(s, createVariableStore())).toBe(
            s.replace(/\$\$(?=[A-Za-z_])/g, "$"),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("substitution at dispatch", () => {
  it("happens after dependencies, and action.dispatched records the substituted parameters", async () => {
    const tools = handExecutor();
    const { scheduler, log } = setup([tools.executor]);
    await scheduler.submit(
      action("use", { dependsOn: ["make"], parameters: { who: "$person.name", all: "$person" } }),
    );
    await scheduler.submit(action("make", { outputKey: "person" }));
    await drain();
    tools.last("make").resolve({ name: "Grace", born: 1906 });
    await drain();
    const expected = { who: "Grace", all: { name: "Grace", born: 1906 } };
    expect(tools.last("use").call.parameters).toEqual(expected);
    const dispatched = log.ofType("action.dispatched").find((e) => e.data.action_id === "use");
    expect(dispatched!.data.parameters).toEqual(expected);
    expect(log.ofType("variable.set")[0]!.data).toEqual({
      name: "person",
      value: { name: "Grace", born: 1906 },
      by: "action",
      action_id: "make",
    });
  });

  it("stores outputs in their JSON form", async () => {
    const tools = handExecutor();
    const { scheduler, variables } = setup([tools.executor]);
    await scheduler.submit(action("a", { outputKey: "out" }));
    await drain();
    tools.last("a").resolve({ when: new Date(0), skip: undefined });
    await drain();
    expect(variables.lookup("out")).toEqual({ value: { when: "1970-01-01T00:00:00.000Z" } });
  });

  it("looks in fallback sources (context feeds) after its own variables", () => {
    const feeds = { lookup: (name: string) => (name === "now" ? { value: "noon" } : undefined) };
    const store = createVariableStore({ initial: { mine: 1 }, fallbacks: [feeds] });
    expect(substituteText("$mine at $now, $other", store)).toBe("1 at noon, $other");
    store.set("now", "shadowed");
    expect(substituteText("$now", store)).toBe("shadowed");
  });
});
