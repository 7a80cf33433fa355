/**
 * Runs the protocol parser benchmark alone: `npx tsx bench/protocol/parser-throughput-main.ts`.
 * Prints one markdown table (3 runs, median shown); progress goes to stderr.
 */
import { renderSection } from "../report.js";
import { measureParserThroughput } from "./parser-throughput.js";

const section = await measureParserThroughput(3, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(renderSection(section));
