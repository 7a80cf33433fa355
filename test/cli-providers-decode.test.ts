import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anthropicTextFrames, OVERLOADED_FRAME } from "./support/anthropic-sse.js";
import { runSpool } from "./support/cli.js";
import { fixtureBytes, PROVIDER_FIXTURES } from "./support/replay-server.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-decode-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const spool = (args: string[], stdin?: (string | Uint8Array)[]) =>
  runSpool(args, { cwd: dir, ...(stdin ? { stdin } : {}) });

describe("spool providers decode", () => {
  it("prints the assembled message of a recorded Anthropic stream, recognising the format", async () => {
    const file = `${PROVIDER_FIXTURES}anthropic/anthropic-json-tool.1.sse`;
    const { code, stdout, stderr } = await spool(["providers", "decode", file]);
    expect(code).toBe(0);
    expect(stderr).toContain("decoding as anthropic");
    const message = JSON.parse(stdout);
    expect(message).toMatchObject({
      format: "anthropic",
      responseId: "msg_01K2JbSUMYhez5RHoK9ZCj9U",
      stopReason: "tool-use",
      usage: { inputTokens: 849, outputTokens: 47 },
    });
    expect(message.content[0]).toMatchObject({
      type: "tool-call",
      name: "json",
      input: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
    });
  });

  it("prints parts as JSON lines, the same for any chunking of the bytes", async () => {
    const file = `${PROVIDER_FIXTURES}anthropic/anthropic-json-tool.1.sse`;
    const whole = await spool(["providers", "decode", "--format", "anthropic", "--parts", file]);
    const bytewise = await spool([
      "providers",
      "decode",
      "--format",
      "anthropic",
      "--parts",
      "--chunk-bytes",
      "1",
      file,
    ]);
    expect(whole.code).toBe(0);
    const lines = whole.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0].type).toBe("start");
    expect(lines.at(-1)).toEqual({ type: "stop", reason: "tool-use", providerReason: "tool_use" });
    expect(bytewise.stdout).toBe(whole.stdout);
  });

  it("reads standard input", async () => {
    const body = fixtureBytes("openai-chat/openai-text.sse");
    const { code, stdout } = await spool(
      ["providers", "decode", "--format", "openai-chat", "-"],
      [body],
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ format: "openai-chat", stopReason: "end" });
  });

  it("exits 1 and prints the partial message when the stream ends with an error", async () => {
    const file = join(dir, "overloaded.sse");
    writeFileSync(file, [...anthropicTextFrames(["half"]).slice(0, 3), OVERLOADED_FRAME].join(""));
    const { code, stdout } = await spool(["providers", "decode", file]);
    expect(code).toBe(1);
    const withParts = await spool(["providers", "decode", "--parts", file]);
    expect(withParts.code).toBe(1);
    expect(JSON.parse(withParts.stdout.trim().split("\n").at(-1)!).type).toBe("error");
    const message = JSON.parse(stdout);
    expect(message.stopReason).toBe("error");
    expect(message.error).toMatchObject({ code: "provider.overloaded" });
    expect(message.content).toEqual([{ type: "text", text: "half" }]);
  });

  it("answers bad input with a usage error that says what to do", async () => {
    const file = join(dir, "noise.txt");
    writeFileSync(file, "hello, not a stream\n");
    const unknown = await spool(["providers", "decode", file]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/pass --format anthropic\|openai-chat\|openai-responses/);
    const badFormat = await spool(["providers", "decode", "--format", "gemini", file]);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("use one of anthropic, openai-chat, openai-responses");
    const badFlavour = await spool([
      "providers",
      "decode",
      "--format",
      "openai-chat",
      "--flavour",
      "nope",
      file,
    ]);
    expect(badFlavour.code).toBe(2);
    expect(badFlavour.stderr).toContain("unknown --flavour");
    const missing = await spool(["providers", "decode", join(dir, "missing.sse")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read");
    const help = await spool(["providers", "decode", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: spool providers decode");
  });

  it("decodes a bad-stream body as an error, not a crash", async () => {
    const file = join(dir, "broken.sse");
    writeFileSync(file, "event: message_start\ndata: {not json\n\n");
    const { code, stdout } = await spool(["providers", "decode", file]);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).error.code).toMatch(/^provider\./);
  });
});
