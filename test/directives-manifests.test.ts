import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createItemSpace, type ItemSpace } from "../src/directives/index.js";
import { ConfigError } from "../src/spec/index.js";

let root: string;
let workspace: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "spool-manifests-"));
  workspace = join(root, "work");
  mkdirSync(workspace, { recursive: true });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const project = (...parts: string[]) => join(workspace, ".ai", ...parts);

function space(): ItemSpace {
  return createItemSpace({
    workspace,
    home: join(root, "home"),
    builtinDir: join(root, "builtin"),
    trustedKeys: new Map(),
    env: {},
  });
}

describe("agent manifests", () => {
  it("parses directive, tools, model, limits, inputs and delegates feeds", () => {
    write(
      project("agents", "researcher.yaml"),
      `directive: assistant
description: Finds things out.
model: { tier: high, provider: anthropic }
limits: { max_turns: 20, max_spend: 1.5 }
inputs: { topic: weather }
tools:
  - fs.*
  - name: http.fetch
    allow_hosts: [api.example.com]
    timeout_seconds: 10
  - name: shell.run
    enabled: false
context_feeds:
  - id: now
    type: on_demand
    source: { type: internal, action: system_clock, params: { format: ISO8601 } }
internal_actions:
  enabled: true
  allowed_actions: [add_context_feed]
`,
    );
    const manifest = space().manifest("researcher");
    expect(manifest).toMatchObject({
      name: "researcher",
      directive: "assistant",
      description: "Finds things out.",
      model: { tier: "high", provider: "anthropic" },
      limits: { maxTurns: 20, maxSpendUsd: 1.5 },
      inputs: { topic: "weather" },
      tools: [
        { pattern: "fs.*", enabled: true, options: {} },
        {
          pattern: "http.fetch",
          enabled: true,
          options: { allow_hosts: ["api.example.com"], timeout_seconds: 10 },
        },
        { pattern: "shell.run", enabled: false, options: {} },
      ],
      source: { tier: "project" },
    });
    expect(manifest.feeds.feeds.map((feed) => feed.id)).toEqual(["now"]);
    expect(manifest.feeds.internalActions).toEqual({
      enabled: true,
      allowedActions: ["add_context_feed"],
    });
  });

  it("names file, line and field for every kind of mistake", () => {
    const file = join(".ai", "agents", "bad.yaml");
    write(
      project("agents", "bad.yaml"),
      `directive: assistant
tols: [fs.*]
limits:
  max_turns: ten
tools:
  - name: http.fetch
    allow_hosts: example.com
context_feeds:
  - id: now
    type: sometimes
    source: { type: internal, action: system_clock }
`,
    );
    let message = "";
    try {
      space().manifest("bad");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).code).toBe("config.agent");
      message = (error as ConfigError).message;
    }
    expect(message).toContain(`${file}:2: tols: unknown field: an agent manifest has directive`);
    expect(message).toContain(
      `${file}:4: limits.max_turns: max_turns must be a whole number, e.g. max_turns: 10`,
    );
    expect(message).toContain(`${file}:7: tools[0].allow_hosts: must be a list of host names`);
    expect(message).toMatch(
      new RegExp(`${file.replace(/\./g, "\\.")}:10: context_feeds\\[0\\]\\.type: .*feed "now"`),
    );

    write(project("agents", "bad.yaml"), "description: no directive\n");
    expect(() => space().manifest("bad")).toThrow(
      /bad\.yaml:1: directive: is missing: name the directive the agent runs/,
    );
    write(project("agents", "bad.yaml"), "directive: [unclosed\n");
    expect(() => space().manifest("bad")).toThrow(/bad\.yaml:\d+: YAML: /);
  });
});
