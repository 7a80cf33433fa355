import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { runToExit, spawnScript } from "./support/child-process.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const entry = pathToFileURL(fileURLToPath(new URL("../src/index.ts", import.meta.url))).href;

/** The README's ```ts blocks that import from "spool". */
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((match) => match[1]!)
  .filter((code) => code.includes('from "spool"'));

describe("README", () => {
  it.each([
    ["runStep", "runStep("],
    ["agent runtime", "createAgentRuntime("],
  ])("runs the %s example and prints exactly the output it shows", async (_name, marker) => {
    const example = blocks.find((code) => code.includes(marker));
    expect(example, `README has an example with ${marker}`).toBeDefined();
    // The block ends with the output it promises, as `// ` comment lines after the code.
    const lines = example!.trimEnd().split("\n");
    const shown: string[] = [];
    while (lines.at(-1)?.startsWith("// ")) shown.unshift(lines.pop()!.slice(3));
    expect(shown.length).toBeGreaterThan(0);
    const file = fileURLToPath(new URL("./readme-example.generated.ts", import.meta.url));
    writeFileSync(file, lines.join("\n").replace('from "spool"', `from ${JSON.stringify(entry)}`));
    try {
      const printed: string[] = [];
      const { code, stderr } = await runToExit(
        spawnScript("../readme-example.generated.ts", []),
        (line) => printed.push(line),
      );
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(printed.filter((line) => line !== "")).toEqual(shown);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
