/**
 * The built-in stream summarizer and log monitor: both load from the built-in tier; a directive
 * gets `stream_summarizer` by its own `<summarizer>`, by `summary_directive_overrides`, and a
 * `<directive>_summarizer` by convention (after the directive's own choice, as the order says);
 * and a real handoff of the log monitor over delivery turns runs `stream_summarizer` with the
 * sources' positions in its "Source positions" section, records them on the summary, and tells
 * the continuation where the log stands.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import {
  renderSourcesInput,
  renderSummarizerInputs,
  spanFromData,
} from "../src/continuity/index.js";
import { checkInputs, createItemSpace } from "../src/directives/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { type EventData, isEvent } from "../src/spec/index.js";
import {
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
  smallCatalogue,
} from "./support/continuity-run.js";
import { generateLogLines } from "./support/log-lines.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-stream-summarizer-");
let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "spool-stream-summarizer-ws-"));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

function directive(name: string, metadata = ""): string {
  return `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata>
    <description>${name}</description>
    <model tier="fast" />${metadata}
  </metadata>
</directive>
\`\`\`

Do ${name}.
`;
}

const space = () =>
  createItemSpace({ workspace, home: workspace, trustedKeys: new Map(), env: {} });

const assemble = (
  agent: { agent?: string; directive?: string },
  provider: Provider = createScriptedProvider({ model: SMALL_MODEL, script: [] }),
) =>
  assembleAgent({
    workspace,
    home: workspace,
    store: temp.store,
    continuity: "watch",
    env: {},
    ...agent,
    provider,
    model: SMALL_MODEL,
  });

describe("the built-in stream summarizer and log monitor", () => {
  it("load from the built-in tier, with the summarizer interface and the monitor's source", () => {
    const items = space();
    const summarizer = items.directive("stream_summarizer");
    expect(summarizer.source.tier).toBe("builtin");
    expect(summarizer.inputs.map((input) => input.name)).toEqual([
      "transcript_content",
      "directive_name",
      "max_summary_tokens",
      "sources",
    ]);
    for (const heading of [
      "## Data Stream",
      "## This Chunk",
      "## Running State",
      "## Next Chunk",
    ]) {
      expect(summarizer.body).toContain(heading);
    }
    for (const heading of [
      "## Current Understanding",
      "## What Changed",
      "## Monitoring State",
      "## Next Thread",
    ]) {
      expect(summarizer.body).toContain(heading);
    }
    const inputs = renderSummarizerInputs({
      transcript: "### User\n\nSource log: chunk 1",
      directiveName: "log_monitor",
      maxSummaryTokens: 2000,
      sources: '- log (cursor mode): chunk 1; cursor after chunk 1: {"offset":10}',
    });
    expect(checkInputs(summarizer, inputs)).toEqual(inputs);

    const monitor = items.directive("log_monitor");
    expect(monitor.source.tier).toBe("builtin");
    expect(monitor.summarizer).toBe("stream_summarizer");
    expect(monitor.permissions.tool).toEqual(["fs.read", "fs.search", "clock.now"]);
    expect(monitor.body).toContain('"name": "source.recall"');
    const manifest = items.manifest("log_monitor");
    expect(manifest.directive).toBe("log_monitor");
    expect(manifest.tools.map((tool) => tool.pattern)).toEqual([
      "fs.read",
      "fs.search",
      "clock.now",
    ]);
    expect(manifest.feeds.internalActions.enabled).toBe(true);
    // Kept as written: the sources module validates it.
    expect(manifest.sources.sources).toEqual([
      {
        id: "log",
        kind: "file",
        target: "logs/app.log",
        patterns: { error: "ERROR|FATAL|Traceback| 5\\d\\d ", warn: "WARN" },
        batch: { max_lines: 500 },
        mode: "cursor",
      },
    ]);
    const error = new RegExp(
      (manifest.sources.sources as [{ patterns: { error: string } }])[0].patterns.error,
    );
    const lines = generateLogLines({ seed: 5, count: 400, burstAt: 100, burstLength: 20 });
    expect(lines.slice(100, 120).every((line) => error.test(line))).toBe(true);
    expect(lines.filter((line) => / 200 \d+ "/.test(line)).some((line) => error.test(line))).toBe(
      false,
    );
  });

  it("is chosen by a directive's own <summarizer>, by an override, and not by the convention before them", async () => {
    write(
      ".ai/directives/watcher.md",
      directive("watcher", '\n    <summarizer directive="stream_summarizer" />'),
    );
    write(".ai/directives/data/feed.md", directive("feed"));
    write(
      ".ai/coordination.yaml",
      'coordination:\n  continuation:\n    summary_directive_overrides:\n      "data/feed": stream_summarizer\n',
    );
    write(".ai/directives/log_monitor_summarizer.md", directive("log_monitor_summarizer"));
    const assembled = assemble({ directive: "watcher" });
    try {
      const select = assembled.options.summarizerFor!;
      expect(select("watcher")).toMatchObject({ name: "stream_summarizer", source: "directive" });
      expect(select("data/feed")).toMatchObject({ name: "stream_summarizer", source: "override" });
      // The built-in log monitor names stream_summarizer itself: that comes before the convention.
      expect(select("log_monitor")).toMatchObject({
        name: "stream_summarizer",
        source: "directive",
      });
      // The summarizer runs as the built-in item.
      expect(assembled.options.summarizerSpec?.("stream_summarizer")).toMatchObject({
        directive: "stream_summarizer",
      });
    } finally {
      await assembled.close();
    }
  });

  it("finds log_monitor_summarizer by convention for a log_monitor that names no summarizer", async () => {
    write(".ai/directives/log_monitor.md", directive("log_monitor"));
    const before = assemble({ directive: "log_monitor" });
    try {
      expect(before.options.summarizerFor!("log_monitor")).toMatchObject({
        name: "thread_summary",
        source: "default",
      });
    } finally {
      await before.close();
    }
    write(".ai/directives/log_monitor_summarizer.md", directive("log_monitor_summarizer"));
    const after = assemble({ directive: "log_monitor" });
    try {
      expect(after.options.summarizerFor!("log_monitor")).toMatchObject({
        name: "log_monitor_summarizer",
        source: "convention",
      });
    } finally {
      await after.close();
    }
  });

  it("summarizes the log monitor's handoff with the log's exact position", async () => {
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<thought>STATE through the newest chunk | baseline steady | spike: none</thought>"],
    });
    const summarizer = scriptedSummarizer([
      "<response>## Data Stream\nThe app log.\n\n## This Chunk (chunks 1–3)\nQuiet.\n\n## Running State\nBaseline steady.\n\n## Next Chunk\nContinue from chunk 4.</response>",
    ]);
    const systems: string[] = [];
    const requests: string[] = [];
    const provider = routedProvider(foreground, summarizer, (request, summary) => {
      if (summary) systems.push(request.system ?? "");
      else requests.push(JSON.stringify(request.messages));
    });
    const assembled = assemble({ agent: "log_monitor" }, provider);
    // The test delivers the log's chunks itself: the runtime reads no source of its own.
    const { sources: _declared, ...options } = assembled.options;
    const runtime = createAgentRuntime({
      store: temp.store,
      ...options,
      catalogue: smallCatalogue(),
      sleep: async () => {},
    });
    const cursor = (n: number) => ({ path: "logs/app.log", inode: 81, offset: n * 2048 });
    try {
      await temp.store.append({
        continuity: "watch",
        stream: { kind: "source", id: "log" },
        type: "source.added",
        data: {
          source_id: "log",
          definition: { id: "log", kind: "file", target: "logs/app.log", mode: "cursor" },
          by: "manifest",
        },
      });
      let continued = false;
      for (let n = 1; n <= 80 && !continued; n++) {
        const lines = generateLogLines({ seed: n, count: 12 });
        const added = await temp.store.append({
          continuity: "watch",
          type: "turn.added",
          actor: "source:log",
          origin: "source",
          data: {
            text: `Source log (file logs/app.log): chunk ${n}, ${lines.length} lines\n${lines.join("\n")}`,
            sources: [{ source_id: "log", from_chunk: n, to_chunk: n, cursor: cursor(n) }],
          },
        });
        const result = await runtime.accept("watch", added.id);
        expect(result.status).toBe("completed");
        continued = (await readAll(temp.store, "watch")).some(
          (event) => event.type === "thread.continued",
        );
      }
      expect(continued).toBe(true);
      // One more delivery, in the continuation.
      const last = await temp.store.append({
        continuity: "watch",
        type: "turn.added",
        actor: "source:log",
        origin: "source",
        data: { text: "Source log: chunk 999", sources: [] },
      });
      await runtime.accept("watch", last.id);
    } finally {
      await runtime.close();
      await assembled.close();
    }
    const events = await readAll(temp.store, "watch");
    const summaries = events.filter((event) => isEvent(event, "summary.completed"));
    expect(summaries.length).toBeGreaterThan(0);
    const first = summaries[0]!.data as EventData<"summary.completed">;
    expect(first.summarizer).toBe("stream_summarizer");
    expect(first.sources).toHaveLength(1);
    const record = first.sources!.map(spanFromData);
    expect(record[0]).toMatchObject({ sourceId: "log", fromChunk: 1 });
    expect(record[0]!.cursor).toEqual(cursor(record[0]!.toChunk));

    // The summarizer's own instructions, with the positions in their section, exactly.
    const system = systems[0]!;
    expect(system).toContain("of a thread that ran the directive `log_monitor`");
    const section = system.slice(
      system.indexOf("## Source positions"),
      system.indexOf("## Transcript"),
    );
    expect(section).toContain(renderSourcesInput(record, new Map([["log", "cursor"]])));
    expect(system).not.toMatch(
      /\$(sources|max_summary_tokens|transcript_content|directive_name)\b/,
    );
    expect(system).toContain(
      `Source log (file logs/app.log): chunk ${record[0]!.toChunk}, 12 lines`,
    );

    // The continuation is told where the log stands.
    const seeded = events.find((event) => isEvent(event, "handoff.seeded"))!;
    const position = (seeded.data as EventData<"handoff.seeded">).sources![0]!;
    expect(position.from_chunk).toBe(1);
    expect(position.cursor).toEqual(cursor(position.to_chunk));
    const told = `continues at chunk ${position.to_chunk + 1}, after cursor ${JSON.stringify(position.cursor)}`;
    expect(requests.some((request) => request.includes(JSON.stringify(told).slice(1, -1)))).toBe(
      true,
    );
  }, 120_000);
});
