import type { AssembledAgent } from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
import { readSourcesState, type SourceDefinition, type SourceState } from "../../sources/index.js";
import type { CommandContext } from "../context.js";
import { oneLine } from "../format.js";
import { redactSecrets } from "../redact.js";
import { sourceRow, sourceTable } from "./sources.js";

/** `log_monitor · openai gpt-4.1 · continuity watch-log_monitor · log (file logs/app.log) from chunk 15 · Ctrl-C stops` */
export async function headerLine(
  watched: {
    store: EventStore;
    continuity: string;
    agent: string;
    definitions: readonly SourceDefinition[];
  },
  assembled: AssembledAgent,
): Promise<string> {
  const { store, continuity, agent, definitions } = watched;
  const state = (await store.continuity(continuity))
    ? await readSourcesState(store, continuity)
    : undefined;
  const sources = definitions.map((definition) => {
    const known = state?.sources.get(definition.id);
    const target = oneLine(redactSecrets(definition.target));
    return `${definition.id} (${definition.kind} ${target})${standing(known)}`;
  });
  const frames = assembled.watch?.source;
  if (frames) sources.push(`frames (${frameSourceText(frames)})`);
  return [
    agent,
    `${assembled.providerName} ${assembled.model}`,
    `continuity ${continuity}`,
    sources.join(", "),
    "Ctrl-C stops",
  ].join(" · ");
}

/** A frame source as the header names it: `directory ./frames`, `video game.mp4 at 2 fps`. */
function frameSourceText(source: NonNullable<AssembledAgent["watch"]>["source"] & object): string {
  switch (source.kind) {
    case "video":
      return `video ${oneLine(redactSecrets(source.input))}${source.fps ? ` at ${source.fps} fps` : ""}`;
    case "directory":
      return `directory ${oneLine(source.directory)}`;
    case "screencast":
      return `screencast${source.tab ? ` of tab ${source.tab}` : ""}`;
    case "push":
      return "pushed frames";
  }
}

/** Where a source the log knows stands, as the header says it: ` from chunk 15`, ` exhausted …`. */
function standing(known: SourceState | undefined): string {
  if (!known) return "";
  const read = `${known.chunks} chunk${known.chunks === 1 ? "" : "s"}`;
  if (known.status === "exhausted") return ` exhausted after ${read}`;
  if (known.status === "paused") return ` paused after ${read} (the agent resumes it)`;
  if (known.status === "removed") return " removed";
  const from = known.chunks > 0 ? ` from chunk ${known.chunks + 1}` : "";
  return known.status === "failed" ? ` (failed before; started again)${from}` : from;
}

/** The last line: how to go on, or (every source has ended) how to read them again. */
export function goOnLine(
  rows: readonly SourceState[],
  agent: string | undefined,
  continuity: string | undefined,
): string {
  const again = `spool watch${agent ? ` --agent ${agent}` : ""}`;
  if (
    rows.length > 0 &&
    rows.every((row) => row.status === "exhausted" || row.status === "removed")
  ) {
    return `Every source has ended here; \`${again} --continuity <new id>\` reads them again from their start.`;
  }
  return `Run \`${again}${continuity ? ` --continuity ${continuity}` : ""}\` to go on from here.`;
}

/** Where each source stands (`spool sources`' rows), on stdout (stderr beside JSON lines). */
export async function printSources(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  json: boolean,
): Promise<SourceState[]> {
  const states = [...(await readSourcesState(store, continuity)).sources.values()];
  const rows = states.map((source) => sourceRow(source, ctx.io.cwd));
  if (rows.length === 0) return states;
  const style = json ? ctx.errStyle : ctx.style;
  for (const line of sourceTable(rows, style)) {
    if (json) ctx.err(line);
    else ctx.out(line);
  }
  return states;
}
