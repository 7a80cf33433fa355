import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { selectSummarizer } from "../src/continuity/summarizer-selection.js";
import {
  CONTINUATION_DEFAULTS,
  findBuiltinDir,
  mergeCoordinationLayers,
  parseCoordinationLayer,
} from "../src/directives/index.js";
import { ConfigError } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { useTempItemSpace, write } from "./support/item-spaces.js";

const temp = useTempItemSpace("spool-coordination-");

const project = (...parts: string[]) => join(temp.workspace, ".ai", ...parts);
const user = (...parts: string[]) => join(temp.home, ".ai", ...parts);
const built = (...parts: string[]) => join(temp.builtin, ...parts);

/** The `ConfigError` `load` throws (fails the test when it does not throw). */
function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("coordination.yaml: three tiers", () => {
  it("merges built-in, user and project, key by key, with defaults for the rest", () => {
    write(
      built("coordination.yaml"),
      `coordination:
  continuation:
    trigger_threshold: 0.9
    summary_directive: thread_summary
    summary_limit_overrides:
      thread_summary: { max_turns: 3, max_spend: 0.02 }
    summarizers:
      browser_summarizer: { summary_max_tokens: 6000, resume_ceiling_tokens: 20000 }
`,
    );
    write(
      user("coordination.yaml"),
      `coordination:
  continuation:
    summary_model: general
    summary_directive_overrides: { research: research_digest }
    summary_limit_overrides:
      thread_summary: { max_turns: 2 }
`,
    );
    write(
      project("coordination.yaml"),
      `coordination:
  continuation:
    trigger_threshold: 0.85
    precompute_threshold: 0.7
    summary_directive_overrides: { browser/automate: browser_summarizer }
    summarizers:
      browser_summarizer: { summary_max_tokens: 5000 }
`,
    );
    const coordination = temp.space().coordination();
    expect(coordination.continuation).toEqual({
      triggerThreshold: 0.85,
      precomputeThreshold: 0.7,
      summaryDirective: "thread_summary",
      summaryDirectiveOverrides: {
        research: "research_digest",
        "browser/automate": "browser_summarizer",
      },
      summaryLimitOverrides: { thread_summary: { maxTurns: 2, maxSpendUsd: 0.02 } },
      summaryModel: "general",
      resumeCeilingTokens: 16000,
      summaryMaxTokens: 4000,
      summarizers: {
        browser_summarizer: { summaryMaxTokens: 5000, resumeCeilingTokens: 20000 },
      },
    });
    expect(coordination.sources.map((source) => source.tier)).toEqual([
      "builtin",
      "user",
      "project",
    ]);
  });

  it("has the defaults with no file at all, and the built-in file states exactly them", () => {
    expect(temp.space().coordination()).toEqual({
      continuation: CONTINUATION_DEFAULTS,
      sources: [],
    });
    expect(mergeCoordinationLayers([]).continuation).toEqual(CONTINUATION_DEFAULTS);
    const shipped = temp.space(findBuiltinDir()).coordination();
    expect(shipped.continuation).toEqual(CONTINUATION_DEFAULTS);
    expect(shipped.sources.map((source) => source.tier)).toEqual(["builtin"]);
    expect(parseCoordinationLayer("", "empty.yaml")).toEqual({});
  });

  it("lists coordination.yaml as its own kind, merged rather than shadowed", async () => {
    write(built("coordination.yaml"), "coordination: { continuation: {} }\n");
    write(project("coordination.yaml"), "coordination:\n  continuation: { summary_model: high }\n");
    expect(temp.space().list({ kind: "coordination" })).toEqual([
      expect.objectContaining({
        kind: "coordination",
        name: "coordination",
        tier: "project",
        active: true,
        shadows: ["builtin"],
        signature: "unsigned",
        display: join(".ai", "coordination.yaml"),
      }),
      expect.objectContaining({ kind: "coordination", tier: "builtin", active: true }),
    ]);
    expect(temp.space().locate("coordination", "coordination")?.tier).toBe("project");

    const listed = await runSpool(["items", "--kind", "coordination"], {
      cwd: temp.workspace,
      env: { HOME: temp.home },
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /coordination\s+coordination\s+project\s+unsigned\s+\.ai\/coordination\.yaml {2}\(merged over builtin\)/,
    );
    expect(listed.stdout).toMatch(
      /coordination\s+coordination\s+builtin\s+builtin\s+.*coordination\.yaml/,
    );

    write(
      project("coordination.yaml"),
      "coordination:\n  continuation: { summary_model: turbo }\n",
    );
    const broken = await runSpool(["items", "--kind", "coordination"], {
      cwd: temp.workspace,
      env: { HOME: temp.home },
    });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(
      `! ${join(".ai", "coordination.yaml")}:2: coordination.continuation.summary_model: must be fast, general or high`,
    );
  });

  it("refuses an unsigned project coordination.yaml under require_signatures", () => {
    write(project("config.yaml"), "policy: { require_signatures: true }\n");
    write(project("coordination.yaml"), "coordination: { continuation: {} }\n");
    expect(() => temp.space().coordination()).toThrow(/not signed/);
  });
});

describe("coordination.yaml: bad values", () => {
  it("names file, line and field of every problem", () => {
    write(
      project("coordination.yaml"),
      `coordination:
  continuation:
    trigger_threshold: 1.5
    summary_model: turbo
    summary_max_tokens: lots
    summary_limit_overrides:
      thread_summary: { max_turns: 0, max_spend: -1, max_minutes: 3 }
    summarizers:
      thread_summary: { summary_max_tokens: 2.5 }
    resume_ceiling: 100
`,
    );
    const error = configError(() => temp.space().coordination());
    expect(error.code).toBe("config.coordination");
    const file = join(".ai", "coordination.yaml");
    for (const expected of [
      `${file}:3: coordination.continuation.trigger_threshold: must be at most 1`,
      `${file}:4: coordination.continuation.summary_model: must be fast, general or high`,
      `${file}:5: coordination.continuation.summary_max_tokens: summary_max_tokens must be a whole number`,
      `${file}:7: coordination.continuation.summary_limit_overrides.thread_summary.max_turns: max_turns must be at least 1`,
      `${file}:7: coordination.continuation.summary_limit_overrides.thread_summary.max_spend: max_spend must be 0 or more`,
      `${file}:7: coordination.continuation.summary_limit_overrides.thread_summary.max_minutes: unknown field: limits are max_turns, max_tokens, max_spend, max_wall_seconds`,
      `${file}:9: coordination.continuation.summarizers.thread_summary.summary_max_tokens: summary_max_tokens must be a whole number`,
      `${file}:10: coordination.continuation.resume_ceiling: unknown field: continuation has trigger_threshold`,
    ]) {
      expect(error.message).toContain(expected);
    }
  });

  it("refuses bad directive names, the wrong shape and broken YAML", () => {
    const bad = configError(() =>
      parseCoordinationLayer(
        "coordination:\n  continuation:\n    summary_directive: ../escape\n",
        "c.yaml",
      ),
    );
    expect(bad.message).toContain(
      "c.yaml:3: coordination.continuation.summary_directive: must be a directive name",
    );
    expect(
      configError(() => parseCoordinationLayer("continuation: {}\n", "c.yaml")).message,
    ).toContain("c.yaml:1: continuation: unknown field: coordination.yaml has coordination");
    expect(configError(() => parseCoordinationLayer("- 1\n", "c.yaml")).message).toContain(
      "coordination.yaml must be a mapping",
    );
    const yaml = configError(() => parseCoordinationLayer("coordination: [\n", "c.yaml"));
    expect(yaml.code).toBe("config.coordination");
    expect(yaml.message).toMatch(/c\.yaml:\d+: YAML: /);
  });

  it("refuses a config.yaml that still has coordination, saying where it moved", () => {
    write(
      project("config.yaml"),
      "policy: { require_signatures: false }\ncoordination:\n  continuation: { trigger_threshold: 0.8 }\n",
    );
    const error = configError(() => temp.space().config());
    expect(error.code).toBe("config.space");
    expect(error.message).toContain(
      `${join(".ai", "config.yaml")}:3: coordination: coordination moved to its own file`,
    );
    expect(error.message).toContain("in coordination.yaml beside this config.yaml");
    expect(error.message).toContain("same keys");
    const [listing] = temp.space().list({ kind: "config" });
    expect(listing?.problem).toContain("coordination moved to its own file");
  });

  it("the shipped config.yaml no longer has coordination", () => {
    const text = readFileSync(join(findBuiltinDir(), "config.yaml"), "utf8");
    expect(text).not.toMatch(/^coordination:/m);
    expect(temp.space(findBuiltinDir()).config().models.fast.anthropic).toBe("claude-haiku-4-5");
  });
});

describe("coordination.yaml: per-summarizer budgets and limits", () => {
  it("a summarizer's own budgets win over the global ones, and limit overrides are its own", () => {
    write(
      project("coordination.yaml"),
      `coordination:
  continuation:
    summary_max_tokens: 3000
    resume_ceiling_tokens: 12000
    summary_directive_overrides: { browser: browser_summarizer }
    summary_limit_overrides:
      browser_summarizer: { max_turns: 2, max_tokens: 9000, max_spend: 0.05, max_wall_seconds: 30 }
    summarizers:
      browser_summarizer: { summary_max_tokens: 6000 }
`,
    );
    const { continuation } = temp.space().coordination();
    const exists = () => false;
    expect(selectSummarizer({ directive: { name: "browser" }, continuation, exists })).toEqual({
      name: "browser_summarizer",
      source: "override",
      maxSummaryTokens: 6000,
      resumeCeilingTokens: 12000,
      limits: { maxTurns: 2, maxTokens: 9000, maxSpendUsd: 0.05, maxWallSeconds: 30 },
    });
    expect(selectSummarizer({ directive: { name: "other" }, continuation, exists })).toEqual({
      name: "thread_summary",
      source: "default",
      maxSummaryTokens: 3000,
      resumeCeilingTokens: 12000,
    });
  });

  it("the built-in summarizer loads through the space with its three inputs", () => {
    const items = temp.space(findBuiltinDir());
    const summarizer = items.directive(items.coordination().continuation.summaryDirective);
    expect(summarizer.name).toBe("thread_summary");
    expect(summarizer.inputs.map((input) => input.name)).toEqual([
      "transcript_content",
      "directive_name",
      "max_summary_tokens",
    ]);
    for (const section of [
      "## Completed Work",
      "## Pending Work",
      "## Key Decisions & Context",
      "## Tool Results",
      "## Next",
    ]) {
      expect(summarizer.body).toContain(section);
    }
  });
});
