/**
 * Summarizer overrides keyed by a directive's full item name, folders included, as seed 000's
 * examples write them (`"data/process": "rye/agent/streams/stream_summarizer"` in the project's
 * coordination.yaml): the assembled agent picks them, and a real handoff of a thread running
 * `data/process` is summarized by that summarizer directive.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { isEvent } from "../src/spec/index.js";
import {
  filler,
  routedProvider,
  SMALL_MODEL,
  SUMMARIZER_MARK,
  scriptedSummarizer,
  smallCatalogue,
} from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-summarizer-folders-");
let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "spool-summarizer-folders-ws-"));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

function directive(item: string, body: string): string {
  const name = item.split("/").at(-1)!;
  return `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata>
    <description>${name}</description>
    <model tier="fast" />
  </metadata>
</directive>
\`\`\`

${body}
`;
}

/** The seed's coordination.yaml, verbatim in its overrides. */
const SEED_COORDINATION = `coordination:
  continuation:
    trigger_threshold: 0.9
    summary_directive: "rye/agent/threads/thread_summary"  # default
    # Per-directive overrides — keyed by directive name
    summary_directive_overrides:
      "browser/automate": "rye/agent/streams/browser_summarizer"
      "vision/monitor": "rye/agent/streams/image_summarizer"
      "data/process": "rye/agent/streams/stream_summarizer"
`;

const SUMMARIZER_BODY = `${SUMMARIZER_MARK} of a thread that ran $directive_name, in at most $max_summary_tokens tokens.\n\n$transcript_content`;

function writeItems(): void {
  write(".ai/coordination.yaml", SEED_COORDINATION);
  write(".ai/directives/data/process.md", directive("data/process", "Process the data."));
  write(".ai/directives/data/ingest.md", directive("data/ingest", "Ingest the data."));
  write(
    ".ai/directives/data/ingest_summarizer.md",
    directive("data/ingest_summarizer", SUMMARIZER_BODY),
  );
  write(".ai/directives/plain.md", directive("plain", "Be plain."));
  for (const name of ["stream_summarizer", "browser_summarizer"]) {
    write(`.ai/directives/rye/agent/streams/${name}.md`, directive(name, SUMMARIZER_BODY));
  }
  write(
    ".ai/directives/rye/agent/threads/thread_summary.md",
    directive("thread_summary", SUMMARIZER_BODY),
  );
}

const assemble = (
  name: string,
  provider: Provider = createScriptedProvider({ model: SMALL_MODEL, script: [] }),
) =>
  assembleAgent({
    workspace,
    home: workspace,
    store: temp.store,
    continuity: "data",
    env: {},
    directive: name,
    provider,
    model: SMALL_MODEL,
  });

describe("summary_directive_overrides keyed by a directive in a sub-folder", () => {
  it("selects the override by the full name, the convention beside it, and the default otherwise", async () => {
    writeItems();
    const assembled = assemble("data/process");
    try {
      const select = assembled.options.summarizerFor!;
      expect(select("data/process")).toMatchObject({
        name: "rye/agent/streams/stream_summarizer",
        source: "override",
      });
      expect(select("browser/automate")).toMatchObject({
        name: "rye/agent/streams/browser_summarizer",
        source: "override",
      });
      expect(select("data/ingest")).toMatchObject({
        name: "data/ingest_summarizer",
        source: "convention",
      });
      // `process` alone is another directive's name: the override is keyed by the full name.
      expect(select("process")).toMatchObject({
        name: "rye/agent/threads/thread_summary",
        source: "default",
      });
      expect(select("plain")).toMatchObject({
        name: "rye/agent/threads/thread_summary",
        source: "default",
      });
      expect(
        assembled.options.summarizerSpec?.("rye/agent/streams/stream_summarizer"),
      ).toMatchObject({ directive: "rye/agent/streams/stream_summarizer" });
    } finally {
      await assembled.close();
    }
  });

  it("a handoff of a thread running data/process is summarized by the overriding summarizer", async () => {
    writeItems();
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const summarized: string[] = [];
    const provider = routedProvider(foreground, scriptedSummarizer(), (request, summary) => {
      if (summary) summarized.push(request.system ?? "");
    });
    const assembled = assemble("data/process", provider);
    const runtime = createAgentRuntime({
      store: temp.store,
      ...assembled.options,
      catalogue: smallCatalogue(),
      sleep: async () => {},
    });
    try {
      let continued = false;
      for (let turn = 1; turn <= 60 && !continued; turn++) {
        const result = await runtime.submit("data", {
          text: filler(turn, 150),
          actor: "ada",
          origin: "test",
        });
        expect(result.status).toBe("completed");
        continued = (await readAll(temp.store, "data")).some(
          (event) => event.type === "thread.continued",
        );
      }
      expect(continued).toBe(true);
    } finally {
      await runtime.close();
      await assembled.close();
    }
    const events = await readAll(temp.store, "data");
    const summaries = events.filter((event) => isEvent(event, "summary.completed"));
    expect(summaries.length).toBeGreaterThan(0);
    for (const event of summaries) {
      expect(event.data).toMatchObject({ summarizer: "rye/agent/streams/stream_summarizer" });
    }
    expect(summarized.length).toBeGreaterThan(0);
    expect(summarized[0]).toContain(
      'You are running the directive "rye/agent/streams/stream_summarizer".',
    );
    expect(summarized[0]).toContain("of a thread that ran data/process");
  });
});
