/**
 * An agent manifest's `sources` and `source_actions` reach the runtime: `assembleAgent` parses
 * them (a problem is the manifest's `ConfigError`, each issue at its line), builds the access
 * policy (the workspace, the allow lists, each declared source's own path or host; commands only
 * with `shell.run`), and a runtime built from the assembled options adds the declared source and
 * delivers what it reads, with the source actions described in the system prompt; `spool replay`
 * of the run says identical.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { ConfigError, type EventData } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { deliveredRanges, MemoryInput, memoryAdapters } from "./support/memory-sources.js";
import { readAll, tempStore } from "./support/transcripts.js";

let store: EventStore;
let storeDir: string;
let cleanup: () => Promise<void>;
let workspace: string;
let home: string;

beforeEach(async () => {
  ({ store, cleanup, dir: storeDir } = await tempStore("spool-sources-wiring-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-sources-wiring-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-sources-wiring-home-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
});
afterEach(async () => {
  await cleanup();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const MANIFEST = `directive: assistant
tools: [clock.now]
sources:
  - id: app-log
    kind: file
    target: logs/app.log
    batch: { max_lines: 2 }
    patterns: { error: ERROR }
  - id: syslog
    kind: file
    target: /var/log/syslog
  - id: ticker
    kind: sse
    target: http://127.0.0.1:8123/events
source_actions:
  enabled: true
  kinds: [file]
  allow_paths: ["/srv/data/**"]
  allow_hosts: ["*.example.com"]
`;

const provider = () =>
  createScriptedProvider({
    model: "scripted",
    loop: true,
    script: ["<response>Noted.</response>"],
  });

function assemble(manifest: string, extra: object = {}) {
  writeFileSync(join(workspace, ".ai", "agents", "watcher.yaml"), manifest);
  return assembleAgent({
    workspace,
    home,
    store,
    continuity: "wired",
    env: {},
    agent: "watcher",
    provider: provider(),
    ...extra,
  });
}

describe("sources from the agent manifest", () => {
  it("become the runtime's sources, whose chunks are delivered, with the actions in the system prompt", async () => {
    const input = new MemoryInput();
    input.append("boot", "ERROR one", "ERROR two");
    input.end();
    const model = provider();
    const assembled = assemble(MANIFEST, {
      provider: model,
      sourceAdapters: memoryAdapters({ "logs/app.log": input }, ["file"]),
    });
    const sources = assembled.options.sources!;
    expect(sources.manifest.definitions.map((definition) => definition.id)).toEqual([
      "app-log",
      "syslog",
      "ticker",
    ]);
    expect(sources.manifest.actions).toMatchObject({ enabled: true, kinds: ["file"] });
    expect(sources.access).toEqual({
      workspace,
      allowPaths: ["/srv/data/**", "logs/app.log", "/var/log/syslog"],
      allowHosts: ["*.example.com", "127.0.0.1:8123"],
      shell: false,
    });
    expect(sources.manifestFile).toBe(join(".ai", "agents", "watcher.yaml"));

    const runtime = createAgentRuntime({ store, ...assembled.options });
    await runtime.submit("wired", { text: "Watch.", actor: "ada", origin: "t" });
    await runtime.sources("wired").untilExhausted();
    const states = runtime.sources("wired").states();
    await runtime.close();
    await assembled.close();
    const events = await readAll(store, "wired");
    expect(
      events
        .filter((event) => event.type === "source.added")
        .map((event) => (event.data as EventData<"source.added">).source_id),
    ).toEqual(["app-log", "syslog", "ticker"]);
    expect(deliveredRanges(events).get("app-log")).toEqual([{ from: 1, to: 2 }]);
    // The runtime has no adapter for syslog's and ticker's kinds here: each failed for good
    // with a message that says so, and the agent was told.
    expect(states.find((state) => state.id === "ticker")).toMatchObject({
      status: "failed",
      lastError: { code: "source.no-adapter" },
    });
    // Every call's system prompt describes the sources and their actions.
    for (const request of model.requests) {
      expect(request.system).toContain("# Sources");
      expect(request.system).toContain('"source.recall"');
      expect(request.system).toContain('"source.add"');
      expect(request.system).toContain("app-log (file logs/app.log)");
    }

    // `spool replay` assembles the agent from the same manifest and re-derives the run, opening
    // no source (this CLI has no adapters at all).
    await store.close();
    const replayed = await runSpool(["replay", "wired", "--db", join(storeDir, "store")], {
      cwd: workspace,
      env: { HOME: home },
    });
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toMatch(/^identical: /);
    expect(replayed.code).toBe(0);
  });

  it("reports every problem of the sections at its line of the manifest", () => {
    const bad = `directive: assistant
sources:
  - id: app-log
    kind: file
    taget: logs/app.log
  - id: feed
    kind: carrier-pigeon
    target: coop
source_actions:
  enabled: maybe
`;
    let caught: unknown;
    try {
      assemble(bad);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.code).toBe("config.agent");
    const file = join(".ai", "agents", "watcher.yaml");
    expect(error.message).toContain(
      `${file}:5: sources[0].taget: unknown field "taget"; did you mean "target"?`,
    );
    expect(error.message).toContain(`${file}:7: sources[1].kind:`);
    expect(error.message).toContain(`${file}:10: source_actions.enabled: must be true or false`);
  });

  it("gives no sources to an agent whose manifest declares none", () => {
    const assembled = assemble("directive: assistant\n");
    expect(assembled.options.sources).toBeUndefined();
  });
});
