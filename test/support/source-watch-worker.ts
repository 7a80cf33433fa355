/**
 * A child process running one watch (`startWatch`) for tests that must show memory stays bounded:
 * the test starts it with a small heap (`--max-old-space-size`), so a runtime that held input in
 * proportion to its size dies of it (and the test sees a crash) instead of merely growing.
 *
 * Reads one JSON line on stdin: `{ dir, sources, shell?, busyUntil?, until }`, where `until` and
 * `busyUntil` are `{ type, source?, count? }`: the watch runs until the log holds `count` (default
 * 1) events of `type` (of `source`, when named); with `busyUntil`, the model's first answer waits
 * until the log holds such events (input piles up while the agent is busy). Then it closes the
 * runtime and prints `done <peak RSS growth in bytes>`. The store and the workspace stay in `dir`.
 */
import { pathToFileURL } from "node:url";
import type { SpoolEvent } from "../../src/spec/index.js";
import { startWatch } from "./source-watch.js";

/** `count` (default 1) events of `type`, of `source` when named (its id, or a delivery of it). */
interface Condition {
  type: string;
  source?: string;
  count?: number;
}

function matches({ type, source }: Condition): (event: SpoolEvent) => boolean {
  return (event) => {
    if (event.type !== type) return false;
    if (source === undefined) return true;
    const data = event.data as { source_id?: string; sources?: { source_id: string }[] };
    return data.source_id === source || (data.sources ?? []).some((s) => s.source_id === source);
  };
}

interface WorkerInput {
  dir: string;
  sources: unknown[];
  shell?: boolean;
  busyUntil?: Condition;
  until: Condition;
}

async function main(input: WorkerInput): Promise<void> {
  let release: () => void = () => {};
  const busy = new Promise<void>((resolve) => {
    release = resolve;
  });
  const watch = await startWatch({
    dir: input.dir,
    sources: input.sources,
    shell: input.shell ?? false,
    ...(input.busyUntil ? { firstAnswer: busy } : {}),
  });
  if (input.busyUntil) {
    await watch.until(matches(input.busyUntil), input.busyUntil.count, [input.busyUntil.type]);
    release();
  }
  await watch.until(matches(input.until), input.until.count, [input.until.type]);
  await watch.stop();
  await watch.store.close();
  process.stdout.write(`done ${watch.peakRss}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  await main(JSON.parse(text) as WorkerInput);
}
