/**
 * Fixtures of the `spool watch` tests: a workspace's agent manifest declaring one source, log
 * lines, a loopback model that answers each delivery with a note quoting its newest log line,
 * and checks on what the log says was delivered.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";
import { type LocalModelServer, startLocalModelServer } from "./local-model-server.js";

/** Writes `.ai/agents/<name>.yaml` running the built-in log_monitor directive over `source`. */
export function writeWatcher(dir: string, name: string, source: Record<string, unknown>): void {
  mkdirSync(join(dir, ".ai", "agents"), { recursive: true });
  const manifest = {
    directive: "log_monitor",
    description: "Watches a test input.",
    tools: ["clock.now"],
    internal_actions: { enabled: true },
    sources: [source],
  };
  // JSON is YAML.
  writeFileSync(join(dir, ".ai", "agents", `${name}.yaml`), JSON.stringify(manifest, null, 2));
}

/** Lines `line <from> …` to `line <from + count - 1> …`, every seventh an ERROR, newline-ended. */
export function logLines(from: number, count: number): string {
  return Array.from({ length: count }, (_, index) => {
    const n = from + index;
    return `line ${n} ${n % 7 === 0 ? "ERROR disk slow" : "INFO ok"}\n`;
  }).join("");
}

/** Appends `logLines(from, count)` to the file at `path` (created when absent). */
export function appendLog(path: string, from: number, count: number): void {
  mkdirSync(join(path, ".."), { recursive: true });
  appendFileSync(path, logLines(from, count));
}

/** The note the model answers a delivery with: `seen line <n>` for its newest `line <n>`. */
export function seenNote(line: number): string {
  return `seen line ${line}`;
}

/**
 * A loopback OpenAI-compatible server whose model answers every request with a short response
 * quoting the newest `line <n>` of the last user message (`seen line <n>`), or `seen nothing`.
 */
export function startNoteTaker(): Promise<LocalModelServer> {
  return startLocalModelServer({
    kind: "plain",
    model: "loop",
    answer: (body) => {
      const request = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const last = request.messages.filter((message) => message.role === "user").at(-1);
      const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
      const numbers = [...text.matchAll(/line (\d+) /g)].map((match) => Number(match[1]));
      const newest = numbers.length > 0 ? Math.max(...numbers) : undefined;
      const note = newest !== undefined ? seenNote(newest) : "seen nothing";
      return { text: `<thought>counting</thought><response>${note}</response>`, inputTokens: 900 };
    },
  });
}

/** The environment that points `spool` at `server`. */
export function modelEnv(server: LocalModelServer): Record<string, string> {
  return { OPENAI_BASE_URL: server.baseURL, SPOOL_MODEL: "loop" };
}

/** Every chunk number the delivery turns of `events` delivered for `source`, in log order. */
export function deliveredChunks(events: readonly SpoolEvent[], source: string): number[] {
  return events
    .filter((event) => event.type === "turn.added")
    .flatMap((event) => (event.data as EventData<"turn.added">).sources ?? [])
    .filter((entry) => entry.source_id === source)
    .flatMap((entry) =>
      Array.from({ length: entry.to_chunk - entry.from_chunk + 1 }, (_, i) => entry.from_chunk + i),
    );
}

/** The numbers of the `source.chunk` events of `source`, in log order. */
export function loggedChunks(events: readonly SpoolEvent[], source: string): number[] {
  return events
    .filter((event) => event.type === "source.chunk")
    .map((event) => event.data as EventData<"source.chunk">)
    .filter((data) => data.source_id === source)
    .map((data) => data.n);
}

/** 1..n */
export function upTo(n: number): number[] {
  return Array.from({ length: n }, (_, index) => index + 1);
}
