/** What a row's target bounds: the ratio to the baseline, or the absolute value. */
export type Target =
  | { minRatio: number }
  | { maxRatio: number }
  | { maxValue: number }
  | { minValue: number };

/**
 * Units of a row; `ms` and `µs` are latencies and `MiB` memory (lower is better), `tokens` and
 * `elements` counts (the ratio a percentage), the rest throughputs.
 */
export type Unit =
  | "events/s"
  | "lines/s"
  | "frames/s"
  | "tokens/s"
  | "MB/s"
  | "ms"
  | "µs"
  | "MiB"
  | "tokens"
  | "elements"
  | "calls/h";

const LATENCY_UNITS: readonly Unit[] = ["ms", "µs", "MiB", "calls/h"];

/** One line of a table: Spool's median beside the engine's ceiling from the same run. */
export interface ResultRow {
  measure: string;
  unit: Unit;
  spool: number;
  /** The raw engine's figure for the same work; absent where there is none. */
  ceiling?: number;
  target?: Target;
}

/** One engine's table, or why it was skipped. */
export interface EngineSection {
  title: string;
  /** Engine and driver versions. */
  engine?: string;
  rows: ResultRow[];
  /** The baseline column's heading (default `ceiling`): e.g. `bare scan`, `AI SDK`. */
  baseline?: string;
  /** Lines printed under the table (fill rates, how the ceilings were taken). */
  notes: string[];
  skipped?: string;
}

/**
 * The ratio column: Spool ÷ ceiling, as a percentage for throughput (higher is better) and as a
 * multiple for latency (lower is better).
 */
function ratio(row: ResultRow): number | undefined {
  return row.ceiling === undefined ? undefined : row.spool / row.ceiling;
}

function met(row: ResultRow): boolean | undefined {
  if (!row.target) return undefined;
  if ("minRatio" in row.target) {
    const r = ratio(row);
    return r === undefined ? undefined : r >= row.target.minRatio;
  }
  if ("maxRatio" in row.target) {
    const r = ratio(row);
    return r === undefined ? undefined : r <= row.target.maxRatio;
  }
  if ("minValue" in row.target) return row.spool >= row.target.minValue;
  return row.spool <= row.target.maxValue;
}

function value(n: number, unit: Unit): string {
  if (!Number.isFinite(n)) return "—";
  if (LATENCY_UNITS.includes(unit)) return `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ${unit}`;
  if (unit === "MB/s")
    return `${n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US")} MB/s`;
  if (unit === "tokens" || unit === "elements") {
    return `${Math.round(n).toLocaleString("en-US")} ${unit}`;
  }
  const noun = unit === "tokens/s" ? " tokens" : unit === "lines/s" ? " lines" : "";
  return `${Math.round(n).toLocaleString("en-US")}${noun}/s`;
}

function targetText(row: ResultRow): string {
  if (!row.target) return "—";
  if ("minRatio" in row.target) {
    return row.target.minRatio > 1
      ? `≥ ${row.target.minRatio}× baseline`
      : `≥ ${Math.round(row.target.minRatio * 100)}% of baseline`;
  }
  if ("maxRatio" in row.target) return `≤ ${row.target.maxRatio}× baseline`;
  if ("minValue" in row.target) return `≥ ${value(row.target.minValue, row.unit)}`;
  return `≤ ${value(row.target.maxValue, row.unit)}`;
}

function ratioText(row: ResultRow): string {
  const r = ratio(row);
  if (r === undefined || !Number.isFinite(r)) return "—";
  if (LATENCY_UNITS.includes(row.unit))
    return r < 0.1 ? `${r.toPrecision(2)}×` : `${r.toFixed(1)}×`;
  if (r > 2) return `${r.toFixed(1)}×`;
  if (r < 0.1) return `${(r * 100).toFixed(1)}%`;
  return `${Math.round(r * 100)}%`;
}

/** A markdown table of `section` (or its skip line), with its title and notes. */
export function renderSection(section: EngineSection): string {
  const lines = [`### ${section.title}${section.engine ? ` — ${section.engine}` : ""}`, ""];
  if (section.skipped) return [...lines, `skipped: ${section.skipped}`, ""].join("\n");
  lines.push(
    `| measure | spool | ${section.baseline ?? "ceiling"} | ratio | target | met |`,
    "|---|---:|---:|---:|---|---|",
  );
  for (const row of section.rows) {
    const ok = met(row);
    lines.push(
      `| ${row.measure} | ${value(row.spool, row.unit)} | ${row.ceiling === undefined ? "—" : value(row.ceiling, row.unit)} | ${ratioText(row)} | ${targetText(row)} | ${ok === undefined ? "—" : ok ? "yes" : "**no**"} |`,
    );
  }
  if (section.notes.length > 0) lines.push("", ...section.notes.map((note) => `- ${note}`));
  lines.push("");
  return lines.join("\n");
}
