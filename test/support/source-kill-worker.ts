/**
 * The child process of the sources kill test (`test/sources-kill.test.ts`): one runtime watching
 * two real sources on one continuity: `app-log`, a file source over `logs/app.log` in the
 * workspace (which the test appends to and rotates), and `counter`, a command source whose shell
 * prints `cmd <its pid> <i>` for i = 1, 2, … until a stop file exists. The model's output
 * depends only on the request (a fixed note, streamed word by word), so a restarted process asks
 * for exactly what the killed one would have, and replay can feed it back.
 *
 * It loads, prints `loaded`, and waits for its arguments on stdin (until EOF), so a test can
 * start the next process while the last one runs: `<db>`, `<workspace>`, `start|resume|finish`,
 * `<sentinel>`, one a line. `start` submits a first user turn; `resume` calls `runtime.resume`;
 * both then run until killed. `finish` resumes and runs until the log holds the sentinel line
 * of `app-log` delivered, `counter` exhausted (the test made the stop file) with its end told,
 * and the run of the last delivery completed; then it closes and prints `done`.
 *
 * Prints one line per fact, each with one write (whole lines survive a SIGKILL in the pipe), each
 * once the event is durable: `ready` once the store is open; `chunk app-log <n> <ino> <offset>`,
 * `chunk counter <n> <run>`; `rotated <source> <reason> <ino> <offset>`; `turn <id>` for a
 * delivery turn; `model` when a model call starts and `tok` per streamed text token; `done`.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createScriptedProvider } from "../../src/providers/index.js";
import type { Provider } from "../../src/providers/provider.js";
import type { StreamPart } from "../../src/providers/stream-part.js";
import {
  type AgentSpec,
  createAgentRuntime,
  type RuntimeSources,
} from "../../src/runtime/index.js";
import { DEFAULT_SOURCE_ADAPTERS, parseSourceManifest } from "../../src/sources/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";
import { tapStored } from "./store-taps.js";

export const SOURCE_KILL_CONTINUITY = "watch";
export const SOURCE_KILL_MODEL = "claude-sonnet-4-5";
/** The followed log, relative to the workspace. */
export const APP_LOG = join("logs", "app.log");
/** The file whose existence ends the counter command's loop (relative to the workspace). */
export const STOP_FILE = "counter.stop";

/** The counter: numbered lines with the shell's pid, until the stop file exists. */
const COUNTER = `i=0; while [ ! -e ${STOP_FILE} ]; do i=$((i+1)); echo "cmd $$ $i"; sleep 0.02; done`;

/** The sources of the kill test's agent, over `workspace`, read by the real adapters. */
export function sourceKillSources(workspace: string): RuntimeSources {
  return {
    manifest: parseSourceManifest({
      sources: [
        {
          id: "app-log",
          kind: "file",
          target: APP_LOG,
          batch: { max_lines: 8, max_wait_ms: 20 },
          options: { poll_ms: 20 },
        },
        {
          id: "counter",
          kind: "command",
          target: COUNTER,
          batch: { max_lines: 10, max_wait_ms: 40 },
          options: { restart: "on-failure", kill_grace_ms: 1_000 },
        },
      ],
    }),
    access: { workspace, allowPaths: [], allowHosts: [], shell: true },
    adapters: DEFAULT_SOURCE_ADAPTERS,
  };
}

/** The kill test's agent: no tools, it notes what its sources deliver. */
export function sourceKillAgent(): AgentSpec {
  return {
    directive: "watcher",
    instructions: "Note what the app log and the counter bring.",
    model: SOURCE_KILL_MODEL,
    limits: {},
    permits: () => true,
    tools: [],
  };
}

/** What the model says to every request: the same note, so a restart asks for the same. */
export const NOTE =
  "<response>Noted the new lines of the app log and the counter; nothing needs doing yet, and I keep watching both.</response>";

/** A provider that plays `NOTE` word by word (1 ms per word), printing `model` and `tok`. */
export function sourceKillModel(print: (line: string) => void = () => {}): Provider {
  return {
    name: "scripted",
    format: "scripted",
    async *stream(request, options) {
      print("model");
      const inner = createScriptedProvider({
        model: SOURCE_KILL_MODEL,
        script: [NOTE],
        tokens: "word",
        timing: { tokenMs: 1 },
      });
      for await (const part of inner.stream(request, options) as AsyncIterable<StreamPart>) {
        if (part.type === "text") print("tok");
        yield part;
      }
    },
  };
}

/** The fact line of a durable event, or undefined for events the test does not follow. */
export function factLine(event: SpoolEvent): string | undefined {
  if (event.type === "source.chunk") {
    const data = event.data as EventData<"source.chunk">;
    const cursor = data.cursor as Record<string, unknown>;
    const where = data.source_id === "counter" ? `${cursor.run}` : `${cursor.ino} ${cursor.offset}`;
    return `chunk ${data.source_id} ${data.n} ${where}`;
  }
  if (event.type === "source.rotated") {
    const data = event.data as EventData<"source.rotated">;
    const cursor = data.cursor as Record<string, unknown>;
    return `rotated ${data.source_id} ${data.reason} ${cursor.ino} ${cursor.offset}`;
  }
  if (event.type === "turn.added" && (event.data as EventData<"turn.added">).sources) {
    return `turn ${event.id}`;
  }
  return undefined;
}

/** `store`, printing the fact line of every event once its append has resolved. */
function printing(store: EventStore, print: (line: string) => void): EventStore {
  return tapStored(store, (event) => {
    const line = factLine(event);
    if (line !== undefined) print(line);
  });
}

/** What `finish` waits for, followed event by event from the log. */
class FinishWatch {
  sentinelChunk: number | undefined;
  appDelivered = 0;
  counterChunks = 0;
  counterDelivered = 0;
  exhaustedAt = 0;
  lastDeliveryAt = 0;
  completedAt = 0;

  constructor(private readonly sentinel: string) {}

  apply(event: SpoolEvent): void {
    if (event.type === "source.chunk") {
      const data = event.data as EventData<"source.chunk">;
      if (data.source_id === "counter") this.counterChunks = data.n;
      if (data.source_id === "app-log" && data.lines?.includes(this.sentinel)) {
        this.sentinelChunk = data.n;
      }
    } else if (event.type === "source.exhausted") {
      this.exhaustedAt = event.seq;
    } else if (event.type === "turn.added") {
      const sources = (event.data as EventData<"turn.added">).sources;
      if (!sources) return;
      this.lastDeliveryAt = event.seq;
      for (const entry of sources) {
        if (entry.source_id === "app-log") this.appDelivered = entry.to_chunk;
        if (entry.source_id === "counter") this.counterDelivered = entry.to_chunk;
      }
    } else if (event.type === "run.completed") {
      this.completedAt = event.seq;
    }
  }

  /** The sentinel delivered, the counter's end told, and the last delivery's run done. */
  get done(): boolean {
    return (
      this.sentinelChunk !== undefined &&
      this.appDelivered >= this.sentinelChunk &&
      this.exhaustedAt > 0 &&
      this.counterDelivered === this.counterChunks &&
      this.lastDeliveryAt > this.exhaustedAt &&
      this.completedAt > this.lastDeliveryAt
    );
  }
}

async function untilFinished(store: EventStore, sentinel: string): Promise<void> {
  const watch = new FinishWatch(sentinel);
  const controller = new AbortController();
  try {
    for await (const message of store.subscribe({
      continuity: SOURCE_KILL_CONTINUITY,
      signal: controller.signal,
    })) {
      if (message.type === "event") watch.apply(message.event);
      if (watch.done) return;
    }
  } finally {
    controller.abort();
  }
}

async function main(args: string[]): Promise<void> {
  const [db, workspace, mode, sentinel] = args;
  if (!db || !workspace || !["start", "resume", "finish"].includes(mode ?? "") || !sentinel) {
    throw new Error("usage: source-kill-worker <db> <workspace> <start|resume|finish> <sentinel>");
  }
  const print = (line: string) => {
    process.stdout.write(`${line}\n`);
  };
  const base = await openEventStore({ db });
  const store = printing(base, print);
  const runtime = createAgentRuntime({
    store,
    provider: sourceKillModel(print),
    agent: sourceKillAgent(),
    sources: sourceKillSources(workspace),
  });
  print("ready");
  if (mode === "start") {
    await runtime.submit(SOURCE_KILL_CONTINUITY, {
      text: "Watch the app log and the counter.",
      actor: "ada",
      origin: "test",
    });
  } else {
    await runtime.resume(SOURCE_KILL_CONTINUITY);
  }
  if (mode !== "finish") {
    // Runs until the test kills it: the sources keep reading, deliveries keep running.
    setInterval(() => {}, 1 << 30);
    return;
  }
  await untilFinished(base, sentinel);
  await runtime.close();
  await base.close();
  print("done");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write("loaded\n");
  let input = "";
  for await (const chunk of process.stdin) input += String(chunk);
  await main(input.trim().split("\n"));
}
