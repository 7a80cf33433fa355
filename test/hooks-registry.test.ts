// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hook files write ${event.…} templates in plain strings
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createItemSpace, ItemTrustError, signItemFile } from "../src/directives/index.js";
import { HOOK_EVENTS, type HookSet, loadHooks } from "../src/hooks/index.js";
import { ConfigError } from "../src/spec/index.js";
import { initKeys, loadSigner } from "../src/transcript/index.js";
import { useTempItemSpace, write } from "./support/item-spaces.js";

const temp = useTempItemSpace("spool-hooks-");

const project = (...parts: string[]) => join(temp.workspace, ".ai", "hooks", ...parts);
const user = (...parts: string[]) => join(temp.home, ".ai", "hooks", ...parts);
const built = (...parts: string[]) => join(temp.builtin, "hooks", ...parts);

const load = (): HookSet => loadHooks({ space: temp.space() });

/** One hook as YAML list entry lines. */
function hook(id: string, event: string, item: string, extra = ""): string {
  return `- id: ${id}
  event: ${event}
  action: { primary: execute, item_type: tool, item_id: ${item} }
${extra}`;
}

/** The ConfigError `run` throws (fails the test when it does not throw). */
function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const summary = (set: HookSet) =>
  set.hooks.map((h) => ({ id: h.id, layer: h.layer, tier: h.source.tier, item: h.action.item_id }));

describe("loading", () => {
  it("reads one mapping or a list per file, sub-folders included, with defaults", () => {
    write(
      project("image_pressure.yaml"),
      `id: image_context_pressure
event: context_window_pressure
description: Summarize images early.
condition: { path: pressure_ratio, op: gte, value: 0.6 }
action:
  primary: execute
  item_type: directive
  item_id: image_summarizer
  params:
    pressure_ratio: "\${event.pressure_ratio}"
    note: "\${event.reason || event.error.code || 'none'}"
`,
    );
    write(
      project("ops", "more.yaml"),
      hook("a_first", "error", "spool.fail") + hook("z_last", "limit", "x"),
    );
    write(project("empty.yaml"), "");
    const set = load();
    expect(summary(set)).toEqual([
      { id: "a_first", layer: 1, tier: "project", item: "spool.fail" },
      { id: "image_context_pressure", layer: 1, tier: "project", item: "image_summarizer" },
      { id: "z_last", layer: 1, tier: "project", item: "x" },
    ]);
    const image = set.hooks[1]!;
    expect(image).toMatchObject({
      enabled: true,
      event: "context_window_pressure",
      description: "Summarize images early.",
      condition: { path: "pressure_ratio", op: "gte", value: 0.6 },
      action: {
        primary: "execute",
        item_type: "directive",
        params: { pressure_ratio: "${event.pressure_ratio}" },
      },
      source: { tier: "project", display: join(".ai", "hooks", "image_pressure.yaml"), line: 1 },
    });
    expect(image.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(set.hooks[0]?.action.params).toEqual({});
    expect(set.hooks[2]?.source.line).toBe(4);
  });

  it("ships the built-in hooks, layer 2, which load without problems", () => {
    const set = loadHooks({
      space: createItemSpace({
        workspace: temp.workspace,
        home: temp.home,
        trustedKeys: new Map(),
        env: {},
      }),
    });
    expect(summary(set)).toEqual([
      { id: "default_compaction", layer: 2, tier: "builtin", item: "${event.summarizer}" },
      { id: "escalate_limits", layer: 2, tier: "builtin", item: "spool.escalate" },
      { id: "fail_permanent_errors", layer: 2, tier: "builtin", item: "spool.fail" },
      { id: "retry_transient_errors", layer: 2, tier: "builtin", item: "spool.retry" },
    ]);
    expect(set.hooks.find((h) => h.id === "retry_transient_errors")?.action.params).toEqual({
      attempt: "${event.attempt}",
    });
  });
});

describe("layers and overriding", () => {
  beforeEach(() => {
    write(
      built("builtin.yaml"),
      hook("retry", "error", "spool.retry") +
        hook("fail", "error", "spool.fail") +
        hook("compact", "context_window_pressure", "summarize"),
    );
  });

  it("project over user over built-in by id; layer 1 evaluated first, then layer 2", () => {
    write(
      user("mine.yaml"),
      hook("retry", "error", "user_retry") + hook("fail", "error", "user_fail"),
    );
    write(project("ours.yaml"), hook("fail", "error", "project_fail"));
    const set = load();
    expect(summary(set)).toEqual([
      { id: "fail", layer: 1, tier: "project", item: "project_fail" },
      { id: "retry", layer: 1, tier: "user", item: "user_retry" },
      { id: "compact", layer: 2, tier: "builtin", item: "summarize" },
    ]);
    expect(set.overridden.map((entry) => [entry.id, entry.source.tier])).toEqual([
      ["fail", "user"],
      ["fail", "builtin"],
      ["retry", "builtin"],
    ]);
    expect(set.disabled).toEqual([]);
  });

  it("enabled: false switches a lower hook off, needing only the id", () => {
    write(project("off.yaml"), "- { id: retry, enabled: false }\n");
    write(user("off.yaml"), "id: compact\nenabled: false\n");
    const set = load();
    expect(summary(set)).toEqual([{ id: "fail", layer: 2, tier: "builtin", item: "spool.fail" }]);
    expect(set.disabled).toEqual(["compact", "retry"]);
  });

  it("a higher tier may switch a hook back on", () => {
    write(user("off.yaml"), "- { id: retry, enabled: false }\n");
    write(project("on.yaml"), hook("retry", "error", "again"));
    expect(summary(load())[0]).toEqual({ id: "retry", layer: 1, tier: "project", item: "again" });
  });

  it("the same id in two files of one tier is refused, naming both", () => {
    write(project("a.yaml"), hook("twice", "error", "x"));
    write(project("b.yaml"), `# b\n${hook("twice", "limit", "y")}`);
    const error = configError(load);
    expect(error.code).toBe("config.hook");
    expect(error.message).toContain(
      `${join(".ai", "hooks", "b.yaml")}:2: id: "twice" is also the id of a hook in ${join(".ai", "hooks", "a.yaml")}:1`,
    );
  });

  it("and the same id twice in one file", () => {
    write(project("a.yaml"), hook("twice", "error", "x") + hook("twice", "error", "y"));
    expect(configError(load).message).toMatch(
      /a\.yaml:4: \[1\]\.id: "twice" is also the id of the hook at line 1/,
    );
  });
});

describe("malformed files give located errors", () => {
  it("an unknown event names the file, line and the events there are", () => {
    write(project("bad.yaml"), "id: x\nevent: on_error\naction: { item_type: tool, item_id: y }\n");
    const error = configError(load);
    expect(error.code).toBe("config.hook");
    expect(error.message).toContain(
      `${join(".ai", "hooks", "bad.yaml")}:2: event: must be one of ${HOOK_EVENTS.join(", ")}`,
    );
    expect(error.hint).toMatch(/docs\/hooks\.md/);
    expect(error.details).toMatchObject({ issues: [{ line: 2, field: "event" }] });
  });

  it("every problem of a list file, each at its line and field", () => {
    write(
      project("bad.yaml"),
      `- id: ok
  event: error
  action: { item_type: tool, item_id: x }
- id: "has space"
  event: limit
  action: { item_type: workflow, item_id: x, extra: 1 }
- id: missing_parts
- id: bad_params
  event: error
  action:
    item_type: tool
    item_id: "\${hook.id}"
    params: { a: ["\${event.x"] }
`,
    );
    const message = configError(load).message;
    const file = join(".ai", "hooks", "bad.yaml");
    expect(message).toContain(`${file}:4: [1].id: must be letters, digits`);
    expect(message).toContain(`${file}:6: [1].action.item_type: must be directive or tool`);
    expect(message).toContain(`${file}:6: [1].action.extra: unknown field: an action has primary`);
    expect(message).toContain(`${file}:7: [2].event: is missing`);
    expect(message).toContain(`${file}:7: [2].action: is missing`);
    expect(message).toContain(`${file}:12: [3].action.item_id:`);
    expect(message).toContain(
      `${file}:13: [3].action.params.a[0]: "\${event.x" has \${ without a closing }`,
    );
  });

  it("a regular expression that does not compile is refused at load", () => {
    write(
      project("re.yaml"),
      `id: re
event: error
condition:
  any:
    - { path: error.code, op: eq, value: x }
    - path: error.message
      op: regex
      value: "(unclosed"
action: { item_type: tool, item_id: spool.fail }
`,
    );
    expect(configError(load).message).toMatch(
      /re\.yaml:8: condition\.any\[1\]\.value: is not a valid regular expression/,
    );
  });

  it("a project or user hook may not claim layer 2", () => {
    write(
      project("layer.yaml"),
      "id: mine\nevent: error\nlayer: 2\naction: { item_type: tool, item_id: x }\n",
    );
    expect(configError(load).message).toMatch(
      /layer\.yaml:3: layer: only built-in hooks are layer 2; a project hook is layer 1/,
    );
    rmSync(project("layer.yaml"));
    write(
      user("layer.yaml"),
      "id: mine\nevent: error\nlayer: 2\naction: { item_type: tool, item_id: x }\n",
    );
    expect(configError(load).message).toMatch(/a user hook is layer 1/);
    rmSync(user("layer.yaml"));
    write(
      built("layer.yaml"),
      "id: mine\nevent: error\nlayer: 1\naction: { item_type: tool, item_id: x }\n",
    );
    expect(summary(load())).toEqual([{ id: "mine", layer: 1, tier: "builtin", item: "x" }]);
  });

  it("YAML syntax errors, unknown fields and wrong shapes", () => {
    write(project("syntax.yaml"), "id: x\n  event: [error\n");
    expect(configError(load).message).toMatch(/syntax\.yaml:\d+: YAML: /);
    rmSync(project("syntax.yaml"));
    write(project("typo.yaml"), "id: x\nevnt: error\naction: { item_type: tool, item_id: y }\n");
    expect(configError(load).message).toMatch(
      /typo\.yaml:2: evnt: unknown field: a hook has id, event/,
    );
    rmSync(project("typo.yaml"));
    write(project("scalar.yaml"), "just text\n");
    expect(configError(load).message).toMatch(
      /scalar\.yaml:1: \(manifest\): a hook file holds one hook mapping or a list/,
    );
  });

  it("spool items lists a malformed hook's problem", () => {
    write(project("bad.yaml"), "id: x\nevent: nope\naction: { item_type: tool, item_id: y }\n");
    write(project("good.yaml"), hook("fine", "error", "y"));
    const listings = temp.space().list({ kind: "hook" });
    expect(listings.map((listing) => [listing.name, listing.problem])).toEqual([
      ["bad", expect.stringMatching(/bad\.yaml:2: event: must be one of error, limit/)],
      ["good", undefined],
    ]);
  });
});

describe("trust", () => {
  it("hook files follow the signature policy", () => {
    const keys = join(temp.workspace, ".spool", "keys");
    initKeys(keys);
    write(join(temp.builtin, "config.yaml"), "policy: { require_signatures: true }\n");
    const path = write(project("signed.yaml"), hook("signed", "error", "x"));
    const items = () =>
      createItemSpace({
        workspace: temp.workspace,
        home: temp.home,
        builtinDir: temp.builtin,
        env: {},
      });
    expect(() => loadHooks({ space: items() })).toThrow(ItemTrustError);
    expect(() => loadHooks({ space: items() })).toThrow(/signed\.yaml: it is not signed/);
    signItemFile(path, loadSigner(keys)!);
    const [loaded] = loadHooks({ space: items() }).hooks;
    expect(loaded?.source.signed?.keyId).toEqual(expect.any(String));
    writeFileSync(path, hook("signed", "error", "tampered"));
    expect(() => loadHooks({ space: items() })).toThrow(ItemTrustError);
    expect(() => loadHooks({ space: items() })).toThrow(/signed\.yaml/);
  });
});
