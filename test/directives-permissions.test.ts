import { describe, expect, it } from "vitest";
import {
  checkPermission,
  deniedMessage,
  effectiveLimits,
  matchesGlob,
  NO_PERMISSIONS,
  PermissionDeniedError,
  type Permissions,
  permits,
  reachedLimit,
  resolveToolAccess,
  type SpaceConfig,
  type ToolSetting,
} from "../src/directives/index.js";

const permissions: Permissions = {
  tool: ["fs.*", "http.fetch", "rye/agent/threads/internal/*", "mcp/**"],
  agent: ["*"],
  relic: [],
  workflow: ["deploy-?"],
  llm: ["summarize"],
};

describe("globs", () => {
  it("* stays within a /-separated segment, ** crosses them, ? is one character", () => {
    expect(matchesGlob("fs.*", "fs.read")).toBe(true);
    expect(matchesGlob("fs.*", "fs.read.lines")).toBe(true);
    expect(matchesGlob("fs.*", "fs")).toBe(false);
    expect(matchesGlob("fs.*", "fsxread")).toBe(false);
    expect(matchesGlob("fs.*", "fs/read")).toBe(false);
    expect(matchesGlob("*", "anything.at.all")).toBe(true);
    expect(matchesGlob("*", "a/b")).toBe(false);
    expect(matchesGlob("**", "a/b/c")).toBe(true);
    expect(matchesGlob("rye/agent/threads/internal/*", "rye/agent/threads/internal/x")).toBe(true);
    expect(matchesGlob("rye/agent/threads/internal/*", "rye/agent/threads/internal/x/y")).toBe(
      false,
    );
    expect(matchesGlob("deploy-?", "deploy-1")).toBe(true);
    expect(matchesGlob("deploy-?", "deploy-12")).toBe(false);
    expect(matchesGlob("a+b(c)", "a+b(c)")).toBe(true);
    expect(matchesGlob("a+b(c)", "aab(c)")).toBe(false);
  });
});

describe("permits", () => {
  it("grants by kind and pattern", () => {
    expect(permits(permissions, "tool", "fs.write")).toBe(true);
    expect(permits(permissions, "tool", "http.fetch")).toBe(true);
    expect(permits(permissions, "tool", "http.post")).toBe(false);
    expect(permits(permissions, "tool", "mcp/github/issues.list")).toBe(true);
    expect(permits(permissions, "agent", "researcher")).toBe(true);
    expect(permits(permissions, "relic", "anything")).toBe(false);
    expect(permits(permissions, "workflow", "deploy-a")).toBe(true);
    expect(permits(permissions, "llm", "summarize")).toBe(true);
    expect(permits(permissions, "llm", "translate")).toBe(false);
    expect(permits(NO_PERMISSIONS, "tool", "fs.read")).toBe(false);
  });

  it("explains which permission to add", () => {
    expect(deniedMessage("researcher", "tool", "http.post")).toBe(
      'directive "researcher" may not run tool "http.post": add <tool>http.post</tool> (or <tool>http.*</tool> for the whole family) inside <permissions><execute> in its file',
    );
    expect(deniedMessage("x", "relic", "solo")).toBe(
      'directive "x" may not run relic "solo": add <relic>solo</relic> inside <permissions><execute> in its file',
    );
    expect(() => checkPermission({ name: "x", permissions }, "relic", "solo")).toThrow(
      PermissionDeniedError,
    );
    expect(() => checkPermission({ name: "x", permissions }, "tool", "fs.read")).not.toThrow();
  });
});

describe("tool access", () => {
  const directive = { name: "assistant", permissions };
  const config: Pick<SpaceConfig, "tools"> = {
    tools: {
      "http.fetch": { enabled: true, options: { allow_hosts: ["a.example"], timeout_seconds: 5 } },
      "fs.delete": { enabled: false, options: {} },
    },
  };
  const tools: ToolSetting[] = [
    { pattern: "fs.*", enabled: true, options: {} },
    { pattern: "http.fetch", enabled: true, options: { allow_hosts: ["b.example"] } },
    { pattern: "fs.write", enabled: false, options: {} },
  ];
  const manifest = { name: "researcher", tools };

  it("needs the directive's permission, the manifest's entry, and the config's consent", () => {
    expect(resolveToolAccess("http.fetch", { directive, manifest, config })).toEqual({
      allowed: true,
      options: { allow_hosts: ["b.example"], timeout_seconds: 5 },
    });
    expect(resolveToolAccess("fs.read", { directive, manifest, config })).toEqual({
      allowed: true,
      options: {},
    });
    expect(resolveToolAccess("http.post", { directive, manifest, config })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("may not run tool"),
    });
    expect(resolveToolAccess("fs.write", { directive, manifest, config })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("switched off for agent"),
    });
    expect(resolveToolAccess("fs.delete", { directive, manifest, config })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("a glob does not switch it on"),
    });
    const named = {
      name: "researcher",
      tools: [...tools, { pattern: "fs.delete", enabled: true, options: {} }],
    };
    expect(resolveToolAccess("fs.delete", { directive, manifest: named, config }).allowed).toBe(
      true,
    );
    expect(resolveToolAccess("mcp/x", { directive, manifest, config })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("does not enable tool"),
    });
  });

  it("without a manifest, the directive and the config decide", () => {
    expect(resolveToolAccess("fs.read", { directive, config })).toEqual({
      allowed: true,
      options: {},
    });
    expect(resolveToolAccess("fs.delete", { directive, config }).allowed).toBe(false);
  });
});

describe("limits", () => {
  it("a manifest tightens a directive's limits", () => {
    expect(
      effectiveLimits(
        { maxTurns: 10, maxSpendUsd: 1 },
        { maxTurns: 20, maxSpendUsd: 0.5, maxTokens: 1000 },
      ),
    ).toEqual({ maxTurns: 10, maxSpendUsd: 0.5, maxTokens: 1000 });
    expect(effectiveLimits({ maxWallSeconds: 60 })).toEqual({ maxWallSeconds: 60 });
  });

  it("reports the first limit reached", () => {
    const limits = { maxTurns: 3, maxSpendUsd: 0.02, maxSpawnDepth: 1 };
    expect(reachedLimit(limits, { turns: 2, spendUsd: 0.01, spawnDepth: 1 })).toBeUndefined();
    expect(reachedLimit(limits, { turns: 3 })).toMatchObject({
      limit: "maxTurns",
      used: 3,
      max: 3,
      message: "max_turns reached: 3 of 3",
    });
    expect(reachedLimit(limits, { spendUsd: 0.03 })?.message).toBe(
      "max_spend reached: $0.03 of $0.02",
    );
    expect(reachedLimit(limits, { spawnDepth: 2 })?.limit).toBe("maxSpawnDepth");
    expect(reachedLimit({}, { turns: 1e9 })).toBeUndefined();
  });
});
