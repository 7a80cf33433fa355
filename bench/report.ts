/** What a row's target bounds: the ratio to the ceiling, or the absolute value. */
export type Target = { minRatio: number } | { maxValue: number };

/** One line of a table: Spool's median beside the engine's ceiling from the same run. */
export interface ResultRow {
  measure: string;
  unit: "events/s" | "ms";
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
  return row.spool <= row.target.maxValue;
}

function value(n: number, unit: ResultRow["unit"]): string {
  if (!Number.isFinite(n)) return "—";
  return unit === "ms"
    ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`
    : `${Math.round(n).toLocaleString("en-US")}/s`;
}

function targetText(row: ResultRow): string {
  if (!row.target) return "—";
  if ("minRatio" in row.target) return `≥ ${Math.round(row.target.minRatio * 100)}% of ceiling`;
  return `≤ ${row.target.maxValue} ms`;
}

function ratioText(row: ResultRow): string {
  const r = ratio(row);
  if (r === undefined || !Number.isFinite(r)) return "—";
  return row.unit === "ms" ? `${r.toFixed(1)}×` : `${Math.round(r * 100)}%`;
}

/** A markdown table of `section` (or its skip line), with its title and notes. */
export function renderSection(section: EngineSection): string {
  const lines = [`### ${section.title}${section.engine ? ` — ${section.engine}` : ""}`, ""];
  if (section.skipped) return [...lines, `skipped: ${section.skipped}`, ""].join("\n");
  lines.push(
    "| measure | spool | ceiling | ratio | target | met |",
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
