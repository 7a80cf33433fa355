/**
 * Runs the action dispatch-latency benchmark alone: `npx tsx bench/protocol/dispatch-latency-main.ts`.
 * Prints one markdown table (3 runs, median shown); progress goes to stderr.
 */
import { renderSection } from "../report.js";
import { measureDispatchLatency } from "./dispatch-latency.js";

const section = await measureDispatchLatency(3, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(renderSection(section));
