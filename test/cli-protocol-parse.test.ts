import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-protocol-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const spool = (args: string[], stdin?: (string | Uint8Array)[]) =>
  runSpool(args, { cwd: dir, ...(stdin ? { stdin } : {}) });

const OUTPUT = `Let me look. 😀 a < b
<thought>I need data.
<action type="tool" mode="async" id="fetch1">
{"name": "web_scraper", "parameters": {"url": "https://example.com"}, "output_key": "page"}
</action>
While that runs, I plan.</thought>
<response final="false">Found: $page</response>
<thought>unclosed`;

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));

describe("spool protocol parse", () => {
  it("prints the parser's events as JSON lines, from a file, without opening a store", async () => {
    writeFileSync(join(dir, "out.txt"), OUTPUT);
    const result = await spool(["protocol", "parse", "out.txt"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const events = lines(result.stdout);
    expect(events.map((event) => event.type)).toEqual([
      "block-start",
      "block-delta",
      "block-end",
      "block-start",
      "block-delta",
      "action",
      "block-delta",
      "block-end",
      "block-start",
      "block-delta",
      "block-end",
      "block-start",
      "block-delta",
      "error",
      "block-end",
    ]);
    expect(events[5]).toMatchObject({
      action: { id: "fetch1", name: "web_scraper", outputKey: "page", inThought: true },
      parentBlock: 1,
    });
    expect(events[13]).toMatchObject({ code: "protocol.unclosed-tag" });
    expect(existsSync(join(dir, ".spool"))).toBe(false);
  });

  it("prints the same lines with --coalesce for every chunking", async () => {
    writeFileSync(join(dir, "out.txt"), OUTPUT);
    const whole = await spool(["protocol", "parse", "--coalesce", "out.txt"]);
    expect(whole.code).toBe(0);
    const one = await spool(["protocol", "parse", "--chunk", "1", "--coalesce", "out.txt"]);
    const random = await spool([
      "protocol",
      "parse",
      "--random-chunks",
      "7",
      "--coalesce",
      "out.txt",
    ]);
    expect(one.stdout).toBe(whole.stdout);
    expect(random.stdout).toBe(whole.stdout);
    const uncoalesced = await spool(["protocol", "parse", "--chunk", "1", "out.txt"]);
    expect(uncoalesced.stdout).not.toBe(whole.stdout);
    expect(lines(uncoalesced.stdout).length).toBeGreaterThan(lines(whole.stdout).length);
  });

  it("cuts the same pieces for the same seed and different ones for another", async () => {
    writeFileSync(join(dir, "out.txt"), OUTPUT);
    const a = await spool(["protocol", "parse", "--random-chunks", "7", "out.txt"]);
    const b = await spool(["protocol", "parse", "--random-chunks", "7", "out.txt"]);
    const c = await spool(["protocol", "parse", "--random-chunks", "8", "out.txt"]);
    expect(a.stdout).toBe(b.stdout);
    expect(c.stdout).not.toBe(a.stdout);
  });

  it("reads standard input for - or no FILE, decoding UTF-8 split across reads", async () => {
    const bytes = new TextEncoder().encode("<response>héllo 😀</response>");
    const pieces = [bytes.slice(0, 13), bytes.slice(13, 22), bytes.slice(22)];
    for (const args of [
      ["protocol", "parse", "--coalesce", "-"],
      ["protocol", "parse", "--coalesce"],
    ]) {
      const result = await spool(args, pieces);
      expect(result.code).toBe(0);
      expect(lines(result.stdout)[1]).toMatchObject({ type: "block-delta", text: "héllo 😀" });
    }
  });

  it.each([
    [["--chunk", "0"], "--chunk must be a whole number of at least 1"],
    [["--chunk", "two"], '--chunk must be a whole number of at least 1, not "two"'],
    [["--random-chunks=-1"], "--random-chunks must be a whole number (0 or more)"],
    [["--random-chunks", "x"], '--random-chunks must be a whole number (0 or more), not "x"'],
    [["--chunk", "2", "--random-chunks", "3"], "--chunk and --random-chunks cannot be combined"],
    [["--bogus"], "unknown option --bogus"],
    [["--chunk"], "option --chunk needs a value"],
    [["a.txt", "b.txt"], 'unexpected argument "b.txt"'],
  ])("bad usage %j exits 2 saying what was wrong", async (args, message) => {
    const result = await spool(["protocol", "parse", ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("Usage: spool protocol parse");
    expect(result.stdout).toBe("");
  });

  it("exits 2 naming a file it cannot read", async () => {
    const missing = await spool(["protocol", "parse", "nope.txt"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^spool: cannot read "nope.txt": .*ENOENT/);
    expect(missing.stderr).toContain("give - to read standard input");
    const directory = await spool(["protocol", "parse", "."]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain('cannot read "."');
  });

  it("has help, and is listed in spool --help", async () => {
    const help = await spool(["protocol", "parse", "--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--chunk", "--random-chunks", "--coalesce", "Examples:"]) {
      expect(help.stdout).toContain(option);
    }
    expect((await spool(["help", "protocol", "parse"])).stdout).toBe(help.stdout);
    expect((await spool(["--help"])).stdout).toContain("protocol parse");
    expect((await spool(["protocol", "--help"])).stdout).toContain("protocol parse");
  });
});
