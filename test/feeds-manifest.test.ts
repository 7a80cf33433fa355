// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the manifest format writes ${ENV} references in plain strings
import { describe, expect, it } from "vitest";
import { type FeedManifest, isEnabledFlag, parseFeedManifest } from "../src/feeds/index.js";
import { ConfigError } from "../src/spec/index.js";

/** The seed's manifest examples (Context Feeds, Advanced Features, Context Feed Examples). */
const SEED_MANIFEST = `
context_feeds:
  - id: "current_datetime"
    type: "on_demand"
    source:
      type: "internal"
      action: "system_clock"
      params:
        format: "ISO8601"
        timezone: "UTC"

  - id: "system_metrics"
    type: "periodic"
    interval: 30  # seconds
    source:
      type: "tool"
      name: "system_monitor_tool"
      params:
        metrics: ["cpu", "memory"]

  - id: "journal_tree"
    type: "on_demand"
    source:
      type: "tool"
      name: "filesystem"
      params:
        path: "\${JOURNAL_ROOT}"
        format: "tree"

  - id: "expensive_data"
    type: "on_demand"
    cache_ttl: 300  # Cache for 5 minutes
    source:
      type: "tool"
      name: "expensive_api_call"

  - id: "large_dataset"
    type: "on_demand"
    max_tokens: 1000  # Truncate if too large
    source:
      type: "relic"
      name: "data_warehouse"

  - id: "debug_info"
    type: "on_demand"
    enabled: "\${DEBUG_MODE}"  # Only load if debug enabled
    source:
      type: "internal"
      action: "debug_context"

  - id: "repo_structure"
    type: "on_demand"
    source:
      type: "tool"
      name: "git_tree"
      params:
        path: "\${REPO_ROOT}"
        max_depth: 3

  - id: "docker_status"
    type: "periodic"
    interval: 60
    source:
      type: "tool"
      name: "docker_ps"

  - id: "project_docs"
    type: "on_demand"
    cache_ttl: 3600  # Cache for 1 hour
    max_tokens: 5000
    source:
      type: "workflow"
      name: "doc_aggregator"
      params:
        paths: ["docs/", "README.md"]
        format: "markdown"

  - id: "code_summary"
    type: "on_demand"
    cache_ttl: 1800
    source:
      type: "llm"
      name: "summarize"
      params:
        prompt: "Summarize the main purpose of this codebase"
        context: "$repo_structure"
        model: "gemini-1.5-flash"

internal_actions:
  enabled: true
  allowed_actions:
    - "add_context_feed"
    - "remove_context_feed"
  # blocked_actions:
  #   - "update_context_feed"
`;

const ENV = { JOURNAL_ROOT: "/home/ada/journal", REPO_ROOT: "/src/spool" };

/** The ConfigError `parse` throws (fails the test when it does not throw one). */
function failure(input: unknown, env: Record<string, string> = ENV): ConfigError {
  try {
    parseFeedManifest(input, { env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected parseFeedManifest to throw");
}

/** One feed entry of YAML (indented under `context_feeds:`), for error-path tests. */
const one = (body: string) => `context_feeds:\n${body}`;

describe("parseFeedManifest: the seed's examples", () => {
  const manifest = parseFeedManifest(SEED_MANIFEST, { env: ENV });

  it("parses every enabled feed in order, with ${ENV} expanded and $name left alone", () => {
    expect(manifest.feeds.map((feed) => feed.id)).toEqual([
      "current_datetime",
      "system_metrics",
      "journal_tree",
      "expensive_data",
      "large_dataset",
      "repo_structure",
      "docker_status",
      "project_docs",
      "code_summary",
    ]);
    expect(manifest.feeds[0]).toEqual({
      id: "current_datetime",
      type: "on_demand",
      source: {
        type: "internal",
        action: "system_clock",
        params: { format: "ISO8601", timezone: "UTC" },
      },
    });
    expect(manifest.feeds[1]).toEqual({
      id: "system_metrics",
      type: "periodic",
      interval: 30,
      source: {
        type: "tool",
        name: "system_monitor_tool",
        params: { metrics: ["cpu", "memory"] },
      },
    });
    expect(manifest.feeds[2]!.source.params).toEqual({ path: "/home/ada/journal", format: "tree" });
    expect(manifest.feeds[3]).toMatchObject({ cache_ttl: 300, source: { params: {} } });
    expect(manifest.feeds[4]).toMatchObject({ max_tokens: 1000, source: { type: "relic" } });
    expect(manifest.feeds[7]).toMatchObject({ cache_ttl: 3600, max_tokens: 5000 });
    expect(manifest.feeds[8]!.source.params.context).toBe("$repo_structure");
  });

  it("leaves the debug feed out while DEBUG_MODE is unset, and lists it as disabled", () => {
    expect(manifest.disabled).toEqual(["debug_info"]);
    const debug = parseFeedManifest(SEED_MANIFEST, { env: { ...ENV, DEBUG_MODE: "1" } });
    expect(debug.feeds.map((feed) => feed.id)).toContain("debug_info");
    expect(debug.disabled).toEqual([]);
  });

  it("reads the internal_actions policy (the seed's security section)", () => {
    expect(manifest.internalActions).toEqual({
      enabled: true,
      allowedActions: ["add_context_feed", "remove_context_feed"],
    });
  });

  it("gives the same manifest for the same data as an object", () => {
    const object = {
      context_feeds: [
        {
          id: "journal_tree",
          type: "on_demand",
          source: { type: "tool", name: "filesystem", params: { path: "${JOURNAL_ROOT}" } },
        },
      ],
    };
    expect(parseFeedManifest(object, { env: ENV }).feeds).toEqual([
      {
        id: "journal_tree",
        type: "on_demand",
        source: { type: "tool", name: "filesystem", params: { path: "/home/ada/journal" } },
      },
    ]);
  });
});

describe("parseFeedManifest: defaults and sections", () => {
  it("treats empty text as a manifest without feeds, allowing every internal action", () => {
    const empty: FeedManifest = {
      feeds: [],
      disabled: [],
      internalActions: { enabled: true },
      environment: { allow: [], allowSecrets: [] },
    };
    expect(parseFeedManifest("", { env: {} })).toEqual(empty);
    expect(parseFeedManifest({ model: "x", directives: [] }, { env: {} })).toEqual(empty);
  });

  it("reads feed_environment and internal_actions with blocked_actions and an ${ENV} switch", () => {
    const manifest = parseFeedManifest(
      [
        "feed_environment:",
        "  allow: [HOME, DEBUG_MODE]",
        "  allow_secrets: [GITHUB_TOKEN]",
        "internal_actions:",
        '  enabled: "${AGENT_SELF_EDIT}"',
        "  blocked_actions: [update_context_feed]",
      ].join("\n"),
      { env: { AGENT_SELF_EDIT: "yes" } },
    );
    expect(manifest.environment).toEqual({
      allow: ["HOME", "DEBUG_MODE"],
      allowSecrets: ["GITHUB_TOKEN"],
    });
    expect(manifest.internalActions).toEqual({
      enabled: true,
      blockedActions: ["update_context_feed"],
    });
    const off = parseFeedManifest("internal_actions:\n  enabled: ${AGENT_SELF_EDIT}\n", {
      env: {},
    });
    expect(off.internalActions).toEqual({ enabled: false });
  });
});

describe("${ENV} expansion and enabled", () => {
  const feed = (params: string, enabled = "") =>
    one(
      `  - id: f\n    type: on_demand\n${enabled}    source:\n      type: tool\n      name: t\n      params:\n${params}`,
    );

  it("expands ${VAR}, ${VAR:-default} and $${ in nested params; keeps $name and non-strings", () => {
    const manifest = parseFeedManifest(
      feed(
        '        a: "${ROOT}/x"\n        b: "${MISSING:-fallback}"\n        c: ["${ROOT}", 3, true]\n        d: { e: "$${ROOT} and $name" }\n        f: "${EMPTY:-used when empty}"\n',
      ),
      { env: { ROOT: "/r", EMPTY: "" } },
    );
    expect(manifest.feeds[0]!.source.params).toEqual({
      a: "/r/x",
      b: "fallback",
      c: ["/r", 3, true],
      d: { e: "${ROOT} and $name" },
      f: "used when empty",
    });
  });

  it("names the feed, the field and the line of an unset variable", () => {
    const error = failure(feed('        path: "${JOURNAL_ROOT}"\n'), {});
    expect(error.code).toBe("config.feeds");
    expect(error.message).toBe(
      'context_feeds[0].source.params.path: ${JOURNAL_ROOT} is not set; set JOURNAL_ROOT in the environment or write ${JOURNAL_ROOT:-default} (feed "f", line 8). Fix each field named; docs/feeds.md describes every field',
    );
    expect(error.details.issues).toEqual([
      {
        path: "context_feeds[0].source.params.path",
        message:
          "${JOURNAL_ROOT} is not set; set JOURNAL_ROOT in the environment or write ${JOURNAL_ROOT:-default}",
        feed: "f",
        line: 8,
        column: 15,
      },
    ]);
  });

  it("reports a malformed reference", () => {
    expect(failure(feed('        path: "${NOT A NAME}"\n')).message).toContain(
      "context_feeds[0].source.params.path: ${NOT A NAME} is not an environment reference",
    );
  });

  it("does not expand (or complain about) a disabled feed's params", () => {
    const manifest = parseFeedManifest(
      feed('        path: "${JOURNAL_ROOT}"\n', '    enabled: "${DEBUG_MODE}"\n'),
      { env: {} },
    );
    expect(manifest.feeds).toEqual([]);
    expect(manifest.disabled).toEqual(["f"]);
  });

  it.each([
    [undefined, false],
    ["", false],
    ["0", false],
    ["false", false],
    ["FALSE", false],
    [" no ", false],
    ["off", false],
    ["1", true],
    ["true", true],
    ["yes", true],
    ["on", true],
    ["verbose", true],
  ])("enabled: ${DEBUG_MODE} with DEBUG_MODE=%j is %s", (value, enabled) => {
    const env = value === undefined ? {} : { DEBUG_MODE: value };
    expect(isEnabledFlag("${DEBUG_MODE}", env)).toBe(enabled);
    const manifest = parseFeedManifest(feed("        x: 1\n", '    enabled: "${DEBUG_MODE}"\n'), {
      env,
    });
    expect(manifest.feeds.length).toBe(enabled ? 1 : 0);
  });

  it("takes booleans as they are", () => {
    expect(isEnabledFlag(false, {})).toBe(false);
    expect(
      parseFeedManifest(feed("        x: 1\n", "    enabled: false\n"), { env: {} }).disabled,
    ).toEqual(["f"]);
  });
});

describe("parseFeedManifest: every error names the path, the problem and the line", () => {
  const tool = "    source: { type: tool, name: t }\n";
  it.each([
    [
      "a negative interval",
      one(`  - id: m\n    type: periodic\n    interval: -30\n${tool}`),
      'context_feeds[0].interval: must be a positive number of seconds for a periodic feed (feed "m", line 4)',
    ],
    [
      "a missing interval",
      one(`  - id: m\n    type: periodic\n${tool}`),
      'context_feeds[0].interval: must be a positive number of seconds for a periodic feed; it is missing (feed "m", line 2)',
    ],
    [
      "an interval as text",
      one(`  - id: m\n    type: periodic\n    interval: "30"\n${tool}`),
      'context_feeds[0].interval: must be a positive number of seconds for a periodic feed (feed "m", line 4)',
    ],
    [
      "an interval under a second",
      one(`  - id: m\n    type: periodic\n    interval: 0.5\n${tool}`),
      'context_feeds[0].interval: must be at least 1 second: a periodic feed refreshes at most once a second (feed "m", line 4)',
    ],
    [
      "an interval on an on_demand feed",
      one(`  - id: m\n    type: on_demand\n    interval: 30\n${tool}`),
      'context_feeds[0].interval: applies only to periodic feeds; remove it or set type: periodic (feed "m", line 4)',
    ],
    [
      "a cache_ttl on a periodic feed",
      one(`  - id: m\n    type: periodic\n    interval: 30\n    cache_ttl: 60\n${tool}`),
      'context_feeds[0].cache_ttl: applies only to on_demand feeds (a periodic feed is refreshed every interval); remove it (feed "m", line 5)',
    ],
    [
      "a zero cache_ttl",
      one(`  - id: m\n    type: on_demand\n    cache_ttl: 0\n${tool}`),
      'context_feeds[0].cache_ttl: must be a positive number of seconds (how long a fetched value is reused) (feed "m", line 4)',
    ],
    [
      "a fractional max_tokens",
      one(`  - id: m\n    type: on_demand\n    max_tokens: 10.5\n${tool}`),
      'context_feeds[0].max_tokens: must be a positive whole number of tokens (feed "m", line 4)',
    ],
    [
      "an unknown type",
      one(`  - id: m\n    type: hourly\n${tool}`),
      'context_feeds[0].type: must be "on_demand" or "periodic" (got "hourly") (feed "m", line 3)',
    ],
    [
      "a missing type",
      one(`  - id: m\n${tool}`),
      'context_feeds[0].type: is required: "on_demand" or "periodic" (feed "m", line 2)',
    ],
    [
      "an id that cannot be a $name",
      one(`  - id: my-feed\n    type: on_demand\n${tool}`),
      'context_feeds[0].id: must start with a letter and hold only letters, digits and _ (it is used as $<id>) (feed "my-feed", line 2)',
    ],
    [
      "a missing id",
      one(`  - type: on_demand\n${tool}`),
      "context_feeds[0].id: is required: the feed's name, used as $<id> (line 2)",
    ],
    [
      "a misspelt field",
      one(`  - id: m\n    type: on_demand\n    cahce_ttl: 5\n${tool}`),
      'context_feeds[0].cahce_ttl: unknown field "cahce_ttl": a context feed has id, type, interval, cache_ttl, max_tokens, source (feed "m", line 4)',
    ],
    [
      "an unknown source type",
      one("  - id: m\n    type: on_demand\n    source: { type: database, name: x }\n"),
      'context_feeds[0].source.type: must be one of internal, tool, relic, workflow, llm (got "database") (feed "m", line 4)',
    ],
    [
      "an internal source without action",
      one("  - id: m\n    type: on_demand\n    source: { type: internal, name: system_clock }\n"),
      'context_feeds[0].source.action: is required for an internal source: the built-in to call, e.g. system_clock (feed "m", line 4); context_feeds[0].source.name: is not used by an internal source; write action: <built-in> instead (feed "m", line 4)',
    ],
    [
      "a tool source without name",
      one("  - id: m\n    type: on_demand\n    source: { type: tool, action: x }\n"),
      'context_feeds[0].source.name: is required for a tool source: the tool to run (feed "m", line 4); context_feeds[0].source.action: is used only by internal sources; a tool source takes name: <tool> (feed "m", line 4)',
    ],
    [
      "a missing source",
      one("  - id: m\n    type: on_demand\n"),
      'context_feeds[0].source: is required: where the value comes from ({ type, action | name, params }) (feed "m", line 2)',
    ],
    [
      "params that are not a mapping",
      one("  - id: m\n    type: on_demand\n    source: { type: tool, name: t, params: [1] }\n"),
      'context_feeds[0].source.params: must be a mapping of parameter names to values (feed "m", line 4)',
    ],
    [
      "a bad enabled",
      one(`  - id: m\n    type: on_demand\n    enabled: 3\n${tool}`),
      'context_feeds[0].enabled: must be true, false, or a string such as "${DEBUG_MODE}" (feed "m", line 4)',
    ],
    [
      "feeds that are not a list",
      "context_feeds: { id: m }\n",
      "context_feeds: must be a list of feeds (line 1)",
    ],
    [
      "an entry that is not a mapping",
      "context_feeds:\n  - just text\n",
      "context_feeds[0]: must be a mapping with id, type, source (line 2)",
    ],
    [
      "a manifest that is not a mapping",
      "- a\n- b\n",
      "(manifest): must be a mapping with context_feeds, internal_actions, feed_environment (line 1)",
    ],
    [
      "an unknown internal_actions field",
      "internal_actions:\n  enabled: true\n  allow: [x]\n",
      'internal_actions.allow: unknown field "allow": internal_actions has enabled, allowed_actions, blocked_actions (line 3)',
    ],
    [
      "a bad environment variable name",
      "feed_environment:\n  allow: [HOME, 'not a name']\n",
      "feed_environment.allow[1]: must be an environment variable name (letters, digits, _) (line 2)",
    ],
  ])("%s", (_name, yaml, message) => {
    const error = failure(yaml);
    expect(error.message).toBe(
      `${message}. Fix each field named; docs/feeds.md describes every field`,
    );
  });

  it("refuses duplicate ids, pointing at the second one and naming the first", () => {
    const error = failure(
      one(
        "  - id: clock\n    type: on_demand\n    source: { type: internal, action: system_clock }\n" +
          "  - id: clock\n    type: on_demand\n    source: { type: internal, action: random }\n",
      ),
    );
    expect(error.details.issues).toEqual([
      {
        path: "context_feeds[1].id",
        message: '"clock" is already the id of context_feeds[0]; feed ids must be unique',
        feed: "clock",
        line: 5,
        column: 9,
      },
    ]);
  });

  it("names each unknown field on its own line", () => {
    const error = failure(
      one(
        "  - id: m\n    type: on_demand\n    foo: 1\n    bar: 2\n    source: { type: tool, name: t }\n",
      ),
    );
    expect(error.details.issues).toEqual(
      ["foo", "bar"].map((key, index) => ({
        path: `context_feeds[0].${key}`,
        message: `unknown field "${key}": a context feed has id, type, interval, cache_ttl, max_tokens, source`,
        feed: "m",
        line: 4 + index,
        column: 10,
      })),
    );
  });

  it("lists every problem at once", () => {
    const error = failure(
      one(
        "  - id: a\n    type: periodic\n    source: { type: tool, name: t }\n" +
          "  - id: b\n    type: on_demand\n    max_tokens: 0\n    source: { type: tool, name: t }\n",
      ),
    );
    expect((error.details.issues as { path: string }[]).map((issue) => issue.path)).toEqual([
      "context_feeds[0].interval",
      "context_feeds[1].max_tokens",
    ]);
  });

  it("names no line for an object input, and prefixes the source name", () => {
    try {
      parseFeedManifest(
        { context_feeds: [{ id: "m", type: "x" }] },
        { source: "agent.yaml", env: {} },
      );
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(
        /^agent\.yaml: context_feeds\[0\]\.type: must be "on_demand" or "periodic" \(got "x"\) \(feed "m"\); /,
      );
    }
  });

  it("reports YAML that does not parse with its line and column", () => {
    const error = failure("context_feeds:\n  - id: a\n    type: [on_demand\n");
    expect(error.code).toBe("config.feeds.yaml");
    expect(error.message).toMatch(
      /^the manifest is not valid YAML: .+ \(line \d+, column \d+\)\. Fix the YAML at that position$/,
    );
    expect(error.details).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    const duplicateKey = failure("context_feeds: []\ncontext_feeds: []\n");
    expect(duplicateKey.message).toContain("(line 2, column 1)");
  });
});
