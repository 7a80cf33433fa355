import type { EventStore } from "../../log/index.js";
import {
  ATTR,
  contentWanted,
  openOtlpSink,
  readTraces,
  resolveOtlpSettings,
  type SpanNode,
  type SpanRecord,
  spanTrees,
  type TelemetryError,
  type TraceTree,
  tracesWanted,
} from "../../telemetry/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool trace`. */
export const TRACE_USAGE: CommandHelp = {
  synopsis: "spool trace <continuity> [--otlp URL | --json] [--run ID] [--content]",
  text: `Usage: spool trace <continuity> [--otlp URL | --json] [--run ID] [--content]

Exports the OpenTelemetry spans of a continuity's runs from its log, after the fact: a run
per turn (invoke_agent), its model calls (chat) and actions (execute_tool), handoffs and child
agents, with the same trace and span ids live export gave them. A run the log leaves open
(the process was killed, or it still runs) ends at its last event with an error status.

With --otlp (or OTEL_EXPORTER_OTLP_ENDPOINT set) the spans go to that OTLP/HTTP collector;
with --json the span trees are printed as JSON; otherwise as an indented outline.
See docs/telemetry.md.

Options:
  --otlp <url>           Send to this OTLP/HTTP endpoint (http://host:4318; /v1/traces added)
  --json                 Print {continuity, traces: [{traceId, roots: [span…]}]} as JSON
  --run <id>             Only the traces of this turn or thread id
  --content              Include message content (as
                         OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true does)
${DB_HELP_LINES}

Examples:
  spool trace home --json
  spool trace home --otlp http://localhost:4318
  spool trace home --run 01JC3V7Q8ZK2N5W4X6Y8A0B1C2 --json
`,
};

/** `spool trace <continuity>`: a continuity's spans, exported or printed. */
export async function traceCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "trace";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    otlp: { type: "string" },
    json: { type: "boolean" },
    run: { type: "string" },
    content: { type: "boolean" },
  });
  const [continuity, ...extra] = positionals;
  if (continuity === undefined) throw new UsageError(command, "missing <continuity>");
  if (extra.length > 0)
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  if (values.json && values.otlp !== undefined)
    throw new UsageError(command, "give either --otlp URL or --json, not both");
  const exportTo =
    values.otlp !== undefined || (!values.json && tracesWanted(ctx.io.env))
      ? resolveOtlpSettings(ctx.io.env, values.otlp)
      : undefined;
  const captureContent = values.content === true || contentWanted(ctx.io.env);
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw continuityNotFound(target, continuity);
  return withStore(ctx, target, async (store) => {
    if (!(await store.continuity(continuity))) throw continuityNotFound(target, continuity);
    const spans = await collect(store, continuity, captureContent, values.run);
    if (exportTo) return exportSpans(ctx, exportTo, spans);
    const trees = spanTrees(spans);
    if (values.json) ctx.out(JSON.stringify({ continuity, traces: trees }, null, 2));
    else for (const tree of trees) printTree(ctx, tree);
    return 0;
  });
}

/** The continuity's spans; with `run`, only the traces holding a run of that turn or thread. */
async function collect(
  store: EventStore,
  continuity: string,
  captureContent: boolean,
  run: string | undefined,
): Promise<SpanRecord[]> {
  const spans: SpanRecord[] = [];
  for await (const span of readTraces(store, continuity, { captureContent })) spans.push(span);
  if (run === undefined) return spans;
  const traces = new Set(
    spans
      .filter(
        (span) => span.attributes[ATTR.turnId] === run || span.attributes[ATTR.threadId] === run,
      )
      .map((span) => span.traceId),
  );
  if (traces.size === 0) {
    throw new UsageError(
      "trace",
      `no run of turn or thread ${JSON.stringify(run)} in ${continuity}`,
    );
  }
  return spans.filter((span) => traces.has(span.traceId));
}

async function exportSpans(
  ctx: CommandContext,
  settings: ReturnType<typeof resolveOtlpSettings>,
  spans: SpanRecord[],
): Promise<number> {
  const errors: TelemetryError[] = [];
  const sink = await openOtlpSink(settings, { onError: (error) => errors.push(error) });
  sink.send(spans);
  await sink.close();
  for (const error of errors) ctx.err(`spool: ${error.message}`);
  const traces = new Set(spans.map((span) => span.traceId)).size;
  ctx.out(`exported ${sink.exported} span(s) of ${traces} trace(s); ${sink.failed} failed`);
  return sink.failed > 0 ? 1 : 0;
}

function printTree(ctx: CommandContext, tree: TraceTree): void {
  ctx.out(ctx.style.bold(`trace ${tree.traceId}`));
  const walk = (node: SpanNode, depth: number) => {
    const ms = Date.parse(node.endTime) - Date.parse(node.startTime);
    const error =
      node.status.code === "error" ? ctx.style.red(` error: ${node.status.message ?? ""}`) : "";
    ctx.out(
      `${"  ".repeat(depth + 1)}${node.name} ${ctx.style.dim(`${ms} ms ${node.spanId}`)}${error}`,
    );
    for (const child of node.children) walk(child, depth + 1);
  };
  for (const root of tree.roots) walk(root, 0);
}
