import { createProtocolParser } from "../../src/protocol/index.js";
import { seededRandom } from "../../src/spec/index.js";
import type { EngineSection, ResultRow, Target } from "../report.js";
import { median } from "../stats.js";

/** Chunk sizes measured, with the targets the issue sets (none for 1-character chunks). */
const SIZES: readonly { chars: number; target?: Target }[] = [
  { chars: 1 },
  { chars: 4, target: { minValue: 50 } },
  { chars: 64, target: { minValue: 300 } },
];

/** Unmeasured runs of each size before the measured ones. */
const WARM_UP_RUNS = 2;

/** About how large the generated document is, in UTF-16 code units (≈ bytes: mostly ASCII). */
const DOCUMENT_CHARS = 4_000_000;

const WORDS =
  "the data source fetch results analysis plan next step compare values because while user report summary table latency value error retry context feed model output wiki papers news".split(
    " ",
  );

/**
 * A realistic protocol document of about `chars` characters: thoughts with nested actions,
 * top-level actions, non-final and final responses in markdown (lists, code, `a < b`, `<br>`),
 * context feeds and some emoji.
 */
export function protocolDocument(chars: number, seed = 1): string {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const sentence = () => {
    const n = 6 + Math.floor(next() * 14);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(pick(WORDS));
    const extra = next();
    if (extra < 0.05) words.push("a < b");
    else if (extra < 0.08) words.push("😀");
    else if (extra < 0.1) words.push("x<y && y <= z");
    return `${words.join(" ")}.`;
  };
  const paragraph = () => Array.from({ length: 2 + Math.floor(next() * 4) }, sentence).join(" ");
  let id = 0;
  const action = (indent: string) => {
    id++;
    const body = JSON.stringify(
      {
        name: pick(["web_scraper", "database_query", "calculator", "summarize"]),
        parameters: { url: `https://example.com/${id}`, query: sentence(), limit: id % 50 },
        output_key: `out_${id}`,
        ...(id % 3 === 0 ? { depends_on: [`a${id - 1}`] } : {}),
      },
      null,
      2,
    );
    return `${indent}<action type="${pick(["tool", "agent", "llm"])}" mode="${pick(["sync", "async"])}" id="a${id}">\n${body}\n${indent}</action>\n`;
  };
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const kind = next();
    let part: string;
    if (kind < 0.4) {
      part = `<thought>\n${paragraph()}\n${action("")}${paragraph()}\n</thought>\n`;
    } else if (kind < 0.55) {
      part = action("");
    } else if (kind < 0.85) {
      part = `<response final="${next() < 0.8 ? "false" : "true"}">\n## Findings\n\n- ${sentence()}\n- ${sentence()}<br>\n\n\`\`\`ts\nif (a < b) return <T>(x: T) => x;\n\`\`\`\n\n${paragraph()}\n</response>\n`;
    } else if (kind < 0.92) {
      part = `<context_feed id="metrics_${id}">\n{"cpu": ${(next() * 100).toFixed(1)}, "note": "load <high>"}\n</context_feed>\n`;
    } else part = `${paragraph()}\n\n`;
    parts.push(part);
    length += part.length;
  }
  return parts.join("");
}

function chunk(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

/** Parses every chunk; returns the number of events (so the work cannot be skipped). */
function parse(chunks: readonly string[]): number {
  const parser = createProtocolParser();
  let events = 0;
  for (const piece of chunks) events += parser.push(piece).length;
  return events + parser.end().length;
}

/** The ceiling: finds every `<` in every chunk and nothing else. */
function bareScan(chunks: readonly string[]): number {
  let found = 0;
  for (const piece of chunks) {
    for (let i = piece.indexOf("<"); i !== -1; i = piece.indexOf("<", i + 1)) found++;
  }
  return found;
}

function megabytesPerSecond(bytes: number, work: () => number): number {
  const start = performance.now();
  work();
  const ms = performance.now() - start;
  return bytes / 1e6 / (ms / 1000);
}

/**
 * Throughput of the protocol parser on a ~4 MB generated document cut into 1-, 4- and
 * 64-character chunks, beside a bare `indexOf("<")` scan over the same chunks in the same run
 * (the ceiling: no parser can find tags with less work). Each row is the median of `runs` runs,
 * the parser and the scan alternating which goes first, after two unmeasured warm-up runs.
 */
export async function measureParserThroughput(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const document = protocolDocument(DOCUMENT_CHARS);
  const bytes = Buffer.byteLength(document, "utf8");
  const rows: ResultRow[] = [];
  let events = 0;
  for (const { chars, target } of SIZES) {
    const chunks = chunk(document, chars);
    // The JIT keeps improving both loops over the first runs; these are not measured.
    for (let warm = 0; warm < WARM_UP_RUNS; warm++) {
      events = parse(chunks);
      bareScan(chunks);
    }
    const spool: number[] = [];
    const ceiling: number[] = [];
    for (let run = 0; run < runs; run++) {
      progress(`protocol parser: ${chars}-character chunks, run ${run + 1}/${runs}`);
      if (run % 2 === 0) {
        spool.push(megabytesPerSecond(bytes, () => parse(chunks)));
        ceiling.push(megabytesPerSecond(bytes, () => bareScan(chunks)));
      } else {
        ceiling.push(megabytesPerSecond(bytes, () => bareScan(chunks)));
        spool.push(megabytesPerSecond(bytes, () => parse(chunks)));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    rows.push({
      measure: `parse, ${chars}-character chunks`,
      unit: "MB/s",
      spool: median(spool),
      ceiling: median(ceiling),
      ...(target ? { target } : {}),
    });
  }
  return {
    title: "Protocol parser",
    engine: `node ${process.version}`,
    baseline: "bare < scan",
    rows,
    notes: [
      `document: ${(bytes / 1e6).toFixed(2)} MB (UTF-8) of thoughts with nested actions, actions, responses in markdown with "<", context feeds and emoji; ${events.toLocaleString("en-US")} events at 64-character chunks`,
      `median of ${runs} runs after ${WARM_UP_RUNS} warm-up runs; chunks are cut before timing; "bare < scan" is indexOf("<") over the same chunks`,
    ],
  };
}
