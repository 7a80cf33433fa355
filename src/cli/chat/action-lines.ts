import type { RunTotals } from "../../runtime/index.js";
import { oneLine, type Style } from "../format.js";
import { fitLine, type LinePart } from "./terminal-text.js";

/** What the chat shows of one action. */
export interface ActionView {
  type: string;
  name: string;
  parameters: Record<string, unknown>;
  /** A short word on its state while it runs (`attempt 2`, `timed out, retrying`). */
  note?: string;
}

/** A duration as `12 ms`, `1.2 s` or `2m 05s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "? ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}

/** A token count with thousands separators: `1,204`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString("en-US");
}

/** USD: `$0.0042` under a dollar, `$1.25` from a dollar on. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(Math.abs(usd) < 1 ? 4 : 2)}`;
}

/** Parameters as compact one-line JSON (`{"path":"README.md"}`); unserialisable ones as `{…}`. */
export function formatParameters(parameters: Record<string, unknown>): string {
  try {
    return oneLine(JSON.stringify(parameters) ?? "{}");
  } catch {
    return "{…}";
  }
}

/**
 * The line of an action in flight: `⠋ tool fs.read 3s {"path":"README.md"}`, fitted to `width`
 * (the parameters, last, are cut first). `elapsedMs` shows from one second on.
 */
export function runningLine(
  marker: string,
  action: ActionView,
  style: Style,
  width: number,
  elapsedMs?: number,
): string {
  const elapsed =
    elapsedMs !== undefined && elapsedMs >= 1000 ? ` ${Math.floor(elapsedMs / 1000)}s` : "";
  const parts: LinePart[] = [
    { text: `${marker} `, paint: style.cyan },
    { text: `${oneLine(action.type)} `, paint: style.dim },
    { text: oneLine(action.name), paint: style.bold },
  ];
  if (action.note) parts.push({ text: ` · ${oneLine(action.note)}`, paint: style.yellow });
  if (elapsed !== "") parts.push({ text: elapsed, paint: style.dim });
  const params = formatParameters(action.parameters);
  if (params !== "{}") parts.push({ text: ` ${params}`, paint: style.dim });
  return fitLine(parts, width);
}

/** How an action ended, as the chat shows it. */
export type ActionEnd =
  | { status: "succeeded"; durationMs: number }
  | { status: "failed"; durationMs?: number; message: string }
  | { status: "skipped"; reason: string; message: string }
  | { status: "cancelled"; durationMs?: number; reason: string };

/**
 * The line an action leaves behind: `✓ fs.read 12 ms` (green), `✗ fs.read 1.2 s — message`
 * (red), `↷ fs.read skipped — reason` or `■ fs.read cancelled — reason`, fitted to `width`.
 */
export function endedLine(name: string, end: ActionEnd, style: Style, width: number): string {
  const duration = (ms?: number) => (ms === undefined ? "" : ` ${formatDuration(ms)}`);
  const label = oneLine(name);
  switch (end.status) {
    case "succeeded":
      return fitLine(
        [
          { text: `✓ ${label}`, paint: style.green },
          { text: duration(end.durationMs), paint: style.dim },
        ],
        width,
      );
    case "failed":
      return fitLine(
        [
          { text: `✗ ${label}`, paint: style.red },
          { text: duration(end.durationMs), paint: style.dim },
          { text: ` — ${oneLine(end.message)}`, paint: style.red },
        ],
        width,
      );
    case "skipped":
      return fitLine(
        [
          { text: `↷ ${label}`, paint: style.yellow },
          { text: ` skipped — ${end.reason}: ${oneLine(end.message)}`, paint: style.dim },
        ],
        width,
      );
    case "cancelled":
      return fitLine(
        [
          { text: `■ ${label}`, paint: style.yellow },
          {
            text: `${duration(end.durationMs)} cancelled — ${oneLine(end.reason)}`,
            paint: style.dim,
          },
        ],
        width,
      );
  }
}

/** Usage of one step: `↳ 1,204 in · 310 out · $0.0042 · context 12%`. */
export function stepLine(
  inputTokens: number,
  outputTokens: number,
  costUsd: number | undefined,
  pressure: number | undefined,
): string {
  const parts = [`${formatCount(inputTokens)} in`, `${formatCount(outputTokens)} out`];
  if (costUsd !== undefined) parts.push(formatUsd(costUsd));
  if (pressure !== undefined) parts.push(`context ${Math.round(pressure * 100)}%`);
  return `↳ ${parts.join(" · ")}`;
}

/** Totals of a run: `Σ 3 steps · 2 actions · 4,100 in · 900 out · $0.0120` (no spend when 0). */
export function totalsLine(totals: RunTotals): string {
  const count = (n: number, one: string) => `${formatCount(n)} ${n === 1 ? one : `${one}s`}`;
  const parts = [
    count(totals.steps, "step"),
    count(totals.actions, "action"),
    `${formatCount(totals.inputTokens)} in`,
    `${formatCount(totals.outputTokens)} out`,
  ];
  if (totals.costUsd > 0) parts.push(formatUsd(totals.costUsd));
  return `Σ ${parts.join(" · ")}`;
}
