import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createCommandSource } from "../src/sources/index.js";
import { startSource, testDefinition } from "./support/source-recorder.js";

const MiB = 1024 * 1024;
const BLOCKS = 200;
const LINES_PER_BLOCK = 10_000;

/** A node script writing 200 MB of numbered 100-byte lines to stderr (blocking on a full pipe), with a line on stdout before and after. */
const flood = [
  "const fs = require(`fs`);",
  "fs.writeSync(1, `first\\n`);",
  `for (let block = 0; block < ${BLOCKS}; block++) {`,
  "  let text = ``;",
  `  for (let line = 0; line < ${LINES_PER_BLOCK}; line++) {`,
  `    text += String(block * ${LINES_PER_BLOCK} + line).padStart(9, "0") + " " + "e".repeat(89) + "\\n";`,
  "  }",
  "  fs.writeSync(2, text);",
  "}",
  "fs.writeSync(1, `last\\n`);",
].join("\n");

describe("command source under a flood", () => {
  it("holds 200 MB of stderr back with a slow runner: memory bounded, every line once, in order", async () => {
    const command = `"${process.execPath}" -e '${flood}'`;
    const definition = testDefinition("command", command, { options: { restart: "never" } });
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let next = 0;
    let outOfOrder = 0;
    const stdout: string[] = [];
    const run = startSource(createCommandSource(definition, { cwd: tmpdir() }), {
      keepLines: false,
      onEmit: async (emission) => {
        if (emission.type !== "chunk") return;
        if (emission.channel === "stdout") stdout.push(...emission.lines);
        else {
          for (const line of emission.lines) {
            if (Number(line.slice(0, 9)) !== next || line.length !== 99) outOfOrder++;
            next++;
          }
        }
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        // A slow runner: this emit resolves only after the event loop went round.
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    await run.done;
    expect(outOfOrder).toBe(0);
    expect(next).toBe(BLOCKS * LINES_PER_BLOCK);
    expect(stdout).toEqual(["first", "last"]);
    expect(run.emissions.slice(-2)).toEqual([
      expect.objectContaining({ type: "notice", exitCode: 0 }),
      {
        type: "exhausted",
        cursor: { run: 1, stdout_lines: 2, stderr_lines: BLOCKS * LINES_PER_BLOCK },
      },
    ]);
    // Far below the 200 MB written: the command waited on its pipe while chunks were emitted.
    expect(peakRss - before.rss).toBeLessThan(64 * MiB);
  });
});
