/**
 * Runs the Spool vs AI SDK tool-calling benchmark alone:
 * `npx tsx bench/protocol/ai-sdk-comparison-main.ts`. Prints one markdown table (3 runs, median
 * shown); progress goes to stderr.
 */
import { renderSection } from "../report.js";
import { measureAiSdkComparison } from "./ai-sdk-comparison.js";

const section = await measureAiSdkComparison(3, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(renderSection(section));
