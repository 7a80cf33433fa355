import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createItemSpace, deepMerge, findBuiltinDir, modelFor } from "../src/directives/index.js";
import { ConfigError } from "../src/spec/index.js";
import { useTempItemSpace, write } from "./support/item-spaces.js";

const temp = useTempItemSpace("spool-spaces-");

function directive(name: string, description: string): string {
  return `\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata><description>${description}</description></metadata>
</directive>
\`\`\`

Instructions of ${description}.
`;
}

const project = (...parts: string[]) => join(temp.workspace, ".ai", ...parts);
const user = (...parts: string[]) => join(temp.home, ".ai", ...parts);
const built = (...parts: string[]) => join(temp.builtin, ...parts);

describe("three tiers", () => {
  it("resolves the first tier that has the item: project, then user, then built-in", () => {
    for (const [dir, tier] of [
      [project, "project"],
      [user, "user"],
      [built, "builtin"],
    ] as const) {
      write(dir("directives", "shared.md"), directive("shared", tier));
    }
    write(user("directives", "personal.md"), directive("personal", "user"));
    write(built("directives", "personal.md"), directive("personal", "builtin"));
    write(built("directives", "base.md"), directive("base", "builtin"));
    write(project("directives", "streams", "browser.md"), directive("browser", "nested"));

    const items = temp.space();
    expect(items.directive("shared")).toMatchObject({
      description: "project",
      source: { tier: "project" },
    });
    expect(items.directive("personal")).toMatchObject({
      description: "user",
      source: { tier: "user" },
    });
    expect(items.directive("base").source.tier).toBe("builtin");
    expect(items.directive("streams/browser").body).toBe("Instructions of nested.");
    expect(items.locate("directive", "shared")).toEqual({
      tier: "project",
      path: project("directives", "shared.md"),
    });
    expect(items.locate("directive", "../escape")).toBeUndefined();
  });

  it("lists every file with its tier, shadowing and status", () => {
    write(project("directives", "shared.md"), directive("shared", "project"));
    write(built("directives", "shared.md"), directive("shared", "builtin"));
    write(user("directives", "shared.md"), directive("shared", "user"));
    write(user("agents", "helper.yaml"), "directive: shared\n");
    write(project("workflows", "deploy.yaml"), "steps: []\n");
    write(
      project("hooks", "pressure.yaml"),
      "id: pressure\nevent: context_window_pressure\naction: { item_type: directive, item_id: x }\n",
    );
    write(project("config.yaml"), "policy: { require_signatures: false }\n");
    write(built("config.yaml"), "models: { fast: { anthropic: claude-haiku-4-5 } }\n");
    write(project("directives", "orphan.md.sig"), "a sidecar is never listed as an item\n");

    const listings = temp.space().list();
    const summary = listings.map(
      ({ kind, name, tier, active, shadows, shadowedBy, signature, display }) => ({
        kind,
        name,
        tier,
        active,
        shadows,
        shadowedBy,
        signature,
        display,
      }),
    );
    expect(summary).toEqual([
      {
        kind: "directive",
        name: "shared",
        tier: "project",
        active: true,
        shadows: ["user", "builtin"],
        shadowedBy: undefined,
        signature: "unsigned",
        display: join(".ai", "directives", "shared.md"),
      },
      {
        kind: "directive",
        name: "shared",
        tier: "user",
        active: false,
        shadows: ["builtin"],
        shadowedBy: "project",
        signature: "unsigned",
        display: join("~", ".ai", "directives", "shared.md"),
      },
      {
        kind: "directive",
        name: "shared",
        tier: "builtin",
        active: false,
        shadows: [],
        shadowedBy: "project",
        signature: "builtin",
        display: built("directives", "shared.md"),
      },
      expect.objectContaining({ kind: "agent", name: "helper", tier: "user", active: true }),
      expect.objectContaining({
        kind: "config",
        tier: "project",
        active: true,
        shadows: ["builtin"],
      }),
      expect.objectContaining({ kind: "config", tier: "builtin", active: true, shadows: [] }),
      expect.objectContaining({ kind: "workflow", name: "deploy", tier: "project" }),
      expect.objectContaining({ kind: "hook", name: "pressure", tier: "project" }),
    ]);
    expect(listings.every((listing) => listing.problem === undefined)).toBe(true);
    expect(
      temp
        .space()
        .list({ kind: "agent" })
        .map((listing) => listing.name),
    ).toEqual(["helper"]);
  });

  it("list reports a malformed item instead of throwing", () => {
    write(
      project("directives", "broken.md"),
      directive("broken", "x").replace('version="1.0.0"', ""),
    );
    const [listing] = temp.space().list({ kind: "directive" });
    expect(listing?.problem).toMatch(
      /\.ai\/directives\/broken\.md:2: <directive>: version is missing/,
    );
    expect(listing?.signature).toBe("unsigned");
  });

  it("a missing item names where it looked and what there is", () => {
    write(built("directives", "base.md"), directive("base", "builtin"));
    const items = temp.space();
    expect(() => items.directive("nope")).toThrow(
      /there is no directive "nope" in .*\(there are: base\)/,
    );
    expect(() => items.manifest("../x")).toThrow(ConfigError);
    expect(() => items.manifest("none")).toThrow(/there is no agent "none"/);
  });
});

describe("config: deep merge across tiers", () => {
  it("merges mappings, merges lists of objects by id, replaces other lists", () => {
    write(
      built("config.yaml"),
      `models:
  fast: { anthropic: claude-haiku-4-5, openai: gpt-4.1-mini }
  general: { anthropic: claude-sonnet-4-5 }
tools:
  - id: http.fetch
    allow_hosts: [a.example]
    timeout_seconds: 5
  - id: shell.run
    enabled: false
`,
    );
    write(
      user("config.yaml"),
      `models:
  fast: { openai: gpt-5-mini }
tools:
  - id: http.fetch
    allow_hosts: [b.example]
policy: { require_signatures: false }
`,
    );
    write(
      project("config.yaml"),
      `tools:
  - id: fs.read
    root: /data
`,
    );
    const config = temp.space().config();
    expect(config.models.fast).toEqual({ anthropic: "claude-haiku-4-5", openai: "gpt-5-mini" });
    expect(config.models.general).toEqual({ anthropic: "claude-sonnet-4-5" });
    expect(config.models.high).toEqual({});
    expect(config.tools).toEqual({
      "http.fetch": { enabled: true, options: { allow_hosts: ["b.example"], timeout_seconds: 5 } },
      "shell.run": { enabled: false, options: {} },
      "fs.read": { enabled: true, options: { root: "/data" } },
    });
    expect(Object.keys(config.tools)).toEqual(["http.fetch", "shell.run", "fs.read"]);
    expect(config.policy.requireSignatures).toBe(false);
    expect(config.sources.map((source) => source.tier)).toEqual(["builtin", "user", "project"]);
    expect(modelFor(config, "fast", "openai")).toBe("gpt-5-mini");
    expect(modelFor(config, "fast", "openai", "explicit")).toBe("explicit");
    expect(modelFor(config, "high", "anthropic")).toBeUndefined();
  });

  it("require_signatures is on when any tier turns it on", () => {
    write(user("config.yaml"), "policy: { require_signatures: true }\n");
    write(project("config.yaml"), "policy: { require_signatures: false }\n");
    expect(() => temp.space().config()).toThrow(/not signed, and policy\.require_signatures is on/);
  });

  it("a malformed config names file, line and field", () => {
    write(
      project("config.yaml"),
      "models:\n  fast: { anthropic: claude-haiku-4-5 }\n  turbo: { anthropic: x }\npolicy:\n  require_signature: true\n",
    );
    let message = "";
    try {
      temp.space().config();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as ConfigError).message;
    }
    expect(message).toContain(
      `${join(".ai", "config.yaml")}:3: models.turbo: unknown field: a tier is fast, general or high`,
    );
    expect(message).toContain(
      `${join(".ai", "config.yaml")}:5: policy.require_signature: unknown field: policy has require_signatures`,
    );
    write(project("config.yaml"), "models: [\n");
    expect(() => temp.space().config()).toThrow(/config\.yaml:\d+: YAML: /);
  });

  it("deepMerge is pure and follows the rules", () => {
    const base = {
      a: { b: 1, c: [1, 2] },
      list: [
        { id: "x", v: 1, keep: true },
        { id: "y", v: 2 },
      ],
    };
    const over = {
      a: { c: [3] },
      list: [
        { id: "y", v: 20 },
        { id: "z", v: 3 },
      ],
      gone: null,
    };
    const copy = structuredClone(base);
    expect(deepMerge(base, over)).toEqual({
      a: { b: 1, c: [3] },
      list: [
        { id: "x", v: 1, keep: true },
        { id: "y", v: 20 },
        { id: "z", v: 3 },
      ],
      gone: null,
    });
    expect(base).toEqual(copy);
    expect(deepMerge([{ id: 1 }], [{ name: "no id" }])).toEqual([{ name: "no id" }]);
    expect(deepMerge({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(deepMerge({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}'))).toEqual({ a: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("built-in items", () => {
  it("ship with Spool and load through a space", () => {
    const dir = findBuiltinDir();
    expect(existsSync(join(dir, "config.yaml"))).toBe(true);
    const items = createItemSpace({
      workspace: temp.workspace,
      home: temp.home,
      trustedKeys: new Map(),
      env: {},
    });
    const assistant = items.directive("assistant");
    expect(assistant.source.tier).toBe("builtin");
    expect(assistant.body).toContain("<thought>");
    expect(assistant.body).toContain("<action");
    expect(assistant.body).toContain('<response final="true">');
    const demo = items.directive("demo");
    expect(demo.permissions.tool).toEqual(["fs.list", "fs.read", "fs.search", "clock.now"]);
    expect(demo.inputs[0]).toMatchObject({ name: "topic", default: "Spool" });
    const config = items.config();
    expect(config.models.fast.anthropic).toBe("claude-haiku-4-5");
    expect(config.policy.requireSignatures).toBe(false);
    const { continuation } = items.coordination();
    expect(continuation.summaryDirective).toBe("thread_summary");
    expect(
      items.directive(continuation.summaryDirective).inputs.map((input) => input.name),
    ).toEqual(["transcript_content", "directive_name", "max_summary_tokens"]);
    expect(items.manifest("assistant").directive).toBe("assistant");
    const listings = items.list();
    expect(listings.length).toBeGreaterThanOrEqual(5);
    expect(listings.filter((listing) => listing.problem)).toEqual([]);
  });

  it("are found from the package root, wherever the module is", () => {
    const fromSrc = findBuiltinDir(
      join(dirname(findBuiltinDir()), "src", "directives", "builtin-dir.ts"),
    );
    const fromDist = findBuiltinDir(
      join(dirname(findBuiltinDir()), "dist", "directives", "builtin-dir.js"),
    );
    expect(fromSrc).toBe(findBuiltinDir());
    expect(fromDist).toBe(findBuiltinDir());
  });
});
