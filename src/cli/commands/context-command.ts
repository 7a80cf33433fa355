import { z } from "zod";
import { type ContextReport, contextReport } from "../../app/index.js";
import { bundleManifest } from "../../continuity/index.js";
import type { EventStore } from "../../log/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  NotFoundError,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, oneLine, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";

/** Help of `spool context`. */
export const CONTEXT_USAGE: CommandHelp = {
  synopsis: "spool context [continuity] [--step STEP] [--show] [--json]",
  text: `Usage: spool context [continuity] [--step STEP] [--show] [--json]

Shows what a model call was given (its context.compiled): the tokens of each part (system
prompt, pinned items, summaries, feeds, messages) against the budget, the messages sent and
left out, the event ranges the messages came from, the summaries (id, tokens, the range each
covers) and the pinned items. Without --step: the latest model call of the conversation
(summarizer and hook threads aside). Without a continuity: the most recently active one.

Options:
  --step <step>          This step: its id (<thread>:<n>), or <n> for step n of the thread that
                         made the latest call
  --show                 Also print the bundle's manifest (what decided the request, by
                         reference: model, system prompt artifact, ranges) as JSON
  --json                 Print one JSON object (the context.compiled data, the summaries and
                         pins resolved, and with --show the manifest)
${DB_HELP_LINES}

Examples:
  spool context
  spool context home --step 3
  spool context home --step th-01JC3V7Q8ZK2N5W4X6Y8A0B1C2.c1:0 --show
`,
};

const manifestSchema = z.record(z.string(), z.unknown());

/**
 * `spool context [continuity] [--step STEP] [--show] [--json]`: what the latest (or the given)
 * model call was given, from one read of the continuity's log (and, with `--show`, its bundle
 * artifact). Read-only. Throws `NotFoundError` (exit 1) for a missing store, continuity or
 * step, or a manifest that is not stored; `UsageError` (exit 2) for bad arguments.
 */
export async function contextCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "context";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    step: { type: "string" },
    show: { type: "boolean" },
    json: { type: "boolean" },
  });
  const [given, ...extra] = positionals;
  if (extra.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  }
  if (values.step !== undefined && values.step.trim() === "") {
    throw new UsageError(command, "--step needs a step id (<thread>:<n>) or a step number");
  }
  const target = locateStore(ctx, values.db);
  const report = await withActiveContinuity(ctx, target, given, async (store, continuity) => {
    const found = await contextReport(store, continuity, values.step);
    if (values.show) found.manifest = await readManifest(store, found);
    return found;
  });
  if (values.json) {
    ctx.out(JSON.stringify(report));
    return 0;
  }
  if (given === undefined) ctx.err(ctx.errStyle.dim(`Context of ${oneLine(report.continuity)}:`));
  for (const line of reportLines(ctx, report)) ctx.out(line);
  if (report.manifest) {
    ctx.out("");
    ctx.out(JSON.stringify(report.manifest, null, 2));
  }
  return 0;
}

async function readManifest(
  store: EventStore,
  report: ContextReport,
): Promise<Record<string, unknown>> {
  const bundle = report.compiled.bundle;
  if (bundle && !(await store.artifacts.has(bundle.hash))) {
    throw new NotFoundError(
      `the manifest of ${report.step} (artifact ${bundle.hash}) is not in the store`,
      "The artifact store was pruned or copied without it; leave out --show",
    );
  }
  let manifest: unknown;
  try {
    manifest = await bundleManifest(store.artifacts, report.compiled);
  } catch {
    manifest = null;
  }
  if (manifest === undefined) {
    throw new NotFoundError(
      `the context of ${report.step} has no manifest`,
      "Steps logged before bundles were recorded have none; leave out --show",
    );
  }
  const parsed = manifestSchema.safeParse(manifest);
  if (!parsed.success) {
    throw new NotFoundError(
      `the artifact ${bundle?.hash ?? ""} of ${report.step} is not a bundle manifest (JSON object)`,
      `Inspect it with \`spool log show ${report.continuity} --type context.compiled --json\``,
    );
  }
  return parsed.data;
}

const PARTS = ["system", "pinned", "summaries", "feeds", "messages"] as const;

function reportLines(ctx: CommandContext, report: ContextReport): string[] {
  const { style } = ctx;
  const data = report.compiled;
  const lines: string[] = [];
  const model = report.model === null ? "" : ` · ${oneLine(report.model)}`;
  lines.push(
    `${style.bold(`Step ${oneLine(report.step)}`)}${model} · seq ${report.seq} · ${formatTime(report.ts)}`,
  );
  const over = data.over_budget ? ` ${style.red("over budget")}` : "";
  lines.push(
    `Tokens: ${count(data.tokens)} of ${count(data.budget)} (${percent(data.tokens, data.budget)})${over} · ${oneLine(data.strategy)}`,
  );
  if (data.parts) {
    const parts = data.parts;
    const width = Math.max(...PARTS.map((part) => count(parts[part]).length));
    for (const part of PARTS) {
      const value = count(parts[part]);
      lines.push(
        `  ${part.padEnd(10)} ${value.padStart(width)}  ${style.dim(percent(parts[part], data.budget))}`,
      );
    }
  }
  lines.push(`Messages: ${count(data.messages)} sent, ${count(data.omitted)} omitted`);
  if (data.ranges && data.ranges.length > 0) {
    const ranges = data.ranges.map(
      (range) => `${oneLine(range.thread)} #${range.from_seq}–#${range.to_seq}`,
    );
    lines.push(`Ranges: ${ranges.join(", ")}`);
  }
  if (report.summaries.length > 0) {
    lines.push("Summaries:");
    for (const summary of report.summaries) {
      const tokens = summary.tokens === null ? "? tokens" : `${count(summary.tokens)} tokens`;
      const covers = summary.covers
        ? `, covers ${oneLine(summary.covers.thread)} #${summary.covers.from_seq}–#${summary.covers.to_seq}`
        : "";
      lines.push(`  ${oneLine(summary.id)}  ${tokens}${covers}`);
    }
  }
  if (report.pinned.length > 0) {
    lines.push("Pinned:");
    for (const pin of report.pinned) {
      const head = `  ${oneLine(pin.id)}  ${(pin.kind ?? "?").padEnd(4)}  `;
      const text = pin.text === null ? style.dim("(not in this log)") : oneLine(pin.text);
      lines.push(`${head}${truncate(text, Math.max(20, ctx.width - head.length))}`);
    }
  }
  if (data.system) {
    lines.push(
      style.dim(
        `Model ${data.model ?? "?"} · system prompt artifact ${data.system}${report.manifest ? "" : "; --show prints the manifest"}`,
      ),
    );
  } else if (data.bundle) {
    lines.push(
      style.dim(
        `Bundle: ${data.bundle.hash} (${count(data.bundle.size)} bytes)${report.manifest ? "" : "; --show prints it"}`,
      ),
    );
  }
  return lines;
}

function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function percent(value: number, of: number): string {
  return of > 0 ? `${Math.round((value / of) * 100)}%` : "-";
}

/** The report's line for a summary, from its `summary.completed` or a seed's copy of it. */
