/**
 * The source sections of an agent manifest: the documented example parses to the definitions the
 * adapters get, defaults follow the kind, and every wrong field is one precise issue naming its
 * path, what is wrong and an example of a right value.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  checkSourceEntry,
  DEFAULT_BATCHING,
  parseSourceManifest,
  SOURCE_KINDS,
  SOURCE_MANIFEST_KEYS,
  sourceEntryOf,
} from "../src/sources/index.js";
import { ConfigError } from "../src/spec/index.js";

const EXAMPLE = String.raw`
sources:
  - id: app-log
    kind: file
    target: logs/app.log
    batch: { max_lines: 500, max_bytes: 65536, max_wait_ms: 1000, max_line_bytes: 65536 }
    include: ["ERROR", "WARN"]
    exclude: ["healthcheck"]
    patterns: { error: "ERROR|FATAL", status_5xx: "\" 5\\d\\d " }
    mode: cursor
    options: { from: start }
  - id: status
    kind: http
    target: https://example.com/status.json
source_actions:
  enabled: true
  kinds: [file, http]
  allow_paths: ["logs/**"]
  allow_hosts: ["127.0.0.1:*", "*.example.com"]
`;

/** The issues of a manifest that must fail, as `path: message` lines. */
function issuesOf(raw: { sources?: unknown; source_actions?: unknown }): string[] {
  try {
    parseSourceManifest(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("config.sources");
    const issues = (error as ConfigError).details.issues as { path: string; message: string }[];
    return issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error("the manifest was accepted");
}

describe("parseSourceManifest", () => {
  it("reads the documented example into definitions and a policy", () => {
    const manifest = parseSourceManifest(parse(EXAMPLE));
    expect(manifest.definitions).toEqual([
      {
        id: "app-log",
        kind: "file",
        target: "logs/app.log",
        batching: { maxLines: 500, maxBytes: 65536, maxWaitMs: 1000, maxLineBytes: 65536 },
        include: ["ERROR", "WARN"],
        exclude: ["healthcheck"],
        patterns: { error: "ERROR|FATAL", status_5xx: '" 5\\d\\d ' },
        mode: "cursor",
        options: { from: "start" },
      },
      {
        id: "status",
        kind: "http",
        target: "https://example.com/status.json",
        batching: DEFAULT_BATCHING,
        include: [],
        exclude: [],
        patterns: {},
        mode: "state",
        options: {},
      },
    ]);
    expect(manifest.actions).toEqual({
      enabled: true,
      kinds: ["file", "http"],
      allowPaths: ["logs/**"],
      allowHosts: ["127.0.0.1:*", "*.example.com"],
    });
    expect(new RegExp(manifest.definitions[0]!.patterns.status_5xx!).test('GET / " 503 ')).toBe(
      true,
    );
    expect(SOURCE_MANIFEST_KEYS).toEqual(["sources", "source_actions"]);
  });

  it("gives each kind its default mode and leaves the model no actions without source_actions", () => {
    const modes = Object.fromEntries(
      SOURCE_KINDS.map((kind) => {
        const target = { http: "http://x", sse: "https://x/e", websocket: "ws://x" }[
          kind as string
        ];
        const manifest = parseSourceManifest({
          sources: [{ id: kind, kind, target: target ?? "x" }],
        });
        return [kind, manifest.definitions[0]!.mode];
      }),
    );
    expect(modes).toEqual({
      file: "cursor",
      command: "cursor",
      dataset: "cursor",
      http: "state",
      sse: "state",
      websocket: "state",
      browser: "state",
    });
    expect(parseSourceManifest({}).actions).toEqual({
      enabled: false,
      kinds: [],
      allowPaths: [],
      allowHosts: [],
    });
    // The browser kind is the agent's own browser's events: `browser:` declares it, not the model.
    expect(parseSourceManifest({ source_actions: {} }).actions.kinds).toEqual(
      SOURCE_KINDS.filter((kind) => kind !== "browser"),
    );
  });

  it("names every wrong field with its path, the fix and an example", () => {
    const issues = issuesOf({
      sources: [
        {
          id: "a",
          kind: "fiel",
          taget: "x",
          batch: { max_lines: 0, max_line: 3 },
          include: ["("],
          patterns: { "5xx": "a", ok: "[" },
          mode: "live",
          options: 3,
        },
        { id: "a", kind: "sse", target: "ftp://x" },
        5,
        { kind: "http", target: "nope" },
      ],
      source_actions: {
        enabled: "yes",
        kinds: ["ftp"],
        allow_hosts: ["bad host", "x:99999"],
        allow_paths: ["{a"],
        alow: 1,
      },
    });
    const at = (path: string) => issues.filter((issue) => issue.startsWith(`${path}: `));
    expect(at("sources[0].kind")).toEqual([
      expect.stringContaining('"fiel" is not a kind of source; did you mean "file"?'),
    ]);
    expect(at("sources[0].taget")).toEqual([
      expect.stringContaining('unknown field "taget"; did you mean "target"?'),
    ]);
    expect(at("sources[0].target")).toEqual([expect.stringContaining("e.g. target: logs/app.log")]);
    expect(at("sources[0].batch.max_lines")).toEqual([
      expect.stringContaining("from 1 to 100000, e.g. max_lines: 500"),
    ]);
    expect(at("sources[0].batch.max_line")).toEqual([
      expect.stringContaining('did you mean "max_lines"?'),
    ]);
    expect(at("sources[0].include[0]")).toEqual([
      expect.stringMatching(/not a valid regular expression \(Invalid regular expression.*\(/),
    ]);
    expect(at("sources[0].patterns.5xx")).toEqual([expect.stringContaining("e.g. status_5xx")]);
    expect(at("sources[0].patterns.ok")).toEqual([
      expect.stringContaining("not a valid regular expression"),
    ]);
    expect(at("sources[0].mode")).toEqual([expect.stringContaining("e.g. mode: cursor")]);
    expect(at("sources[0].options")).toEqual([expect.stringContaining("e.g. options:")]);
    expect(at("sources[1].id")).toEqual([
      expect.stringContaining('"a" is already the id of sources[0]'),
    ]);
    expect(at("sources[1].target")).toEqual([
      expect.stringContaining("an sse source reads http:// or https:// URLs, not ftp://"),
    ]);
    expect(at("sources[2]")).toEqual([expect.stringContaining("must be a mapping with id")]);
    expect(at("sources[3].id")).toEqual([expect.stringContaining("is missing")]);
    expect(at("sources[3].target")).toEqual([expect.stringContaining("absolute URL")]);
    expect(at("source_actions.enabled")).toEqual([expect.stringContaining("e.g. enabled: true")]);
    expect(at("source_actions.kinds[0]")).toEqual([expect.stringContaining("e.g. kinds:")]);
    expect(at("source_actions.alow")).toEqual([expect.stringContaining('unknown field "alow"')]);
    expect(at("source_actions.allow_paths[0]")).toEqual([expect.stringContaining("unclosed `{`")]);
    expect(at("source_actions.allow_hosts[0]")).toEqual([
      expect.stringContaining('"bad host" is not a host'),
    ]);
    expect(at("source_actions.allow_hosts[1]")).toEqual([
      expect.stringContaining('"x:99999" is not a host'),
    ]);
    expect(issues).toHaveLength(21);
  });

  it("rejects sections of the wrong shape", () => {
    expect(issuesOf({ sources: {}, source_actions: [] })).toEqual([
      expect.stringMatching(/^sources: must be a list of sources, e\.g\./),
      expect.stringMatching(/^source_actions: must be a mapping, e\.g\./),
    ]);
  });

  it("puts every issue in the error's message too, with the source it is in", () => {
    try {
      parseSourceManifest({ sources: [{ id: "web", kind: "file", target: "x", mode: 1 }] });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(
        /^sources\[0\]\.mode: must be cursor .* \(source "web"\)\. Fix each field named/,
      );
    }
  });
});

describe("sourceEntryOf", () => {
  it("writes a definition that checkSourceEntry reads back equal", () => {
    const regex = fc.constantFrom("ERROR", "a|b", "^\\d+$", "[a-z]{2,}");
    const entry = fc.record({
      id: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      kind: fc.constantFrom("file", "command", "dataset"),
      target: fc.stringMatching(/^[a-z][a-z/.]{0,20}$/),
      batch: fc.record(
        {
          max_lines: fc.integer({ min: 1, max: 100_000 }),
          max_wait_ms: fc.integer({ min: 0, max: 3_600_000 }),
        },
        { requiredKeys: [] },
      ),
      include: fc.array(regex, { maxLength: 3 }),
      patterns: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), regex),
      mode: fc.constantFrom("cursor", "state"),
      options: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.jsonValue()),
    });
    fc.assert(
      fc.property(entry, (raw) => {
        const first = checkSourceEntry(JSON.parse(JSON.stringify(raw)));
        expect(first.issues).toBeUndefined();
        const again = checkSourceEntry(sourceEntryOf(first.definition!));
        expect(again.definition).toEqual(first.definition);
      }),
    );
  });
});
