import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assembleMessage, messageText, type StreamPart } from "../src/providers/index.js";
import {
  createScriptedProvider,
  loadScript,
  splitTokens,
} from "../src/providers/scripted/index.js";
import { ConfigError } from "../src/spec/index.js";
import { collect } from "./support/events.js";

const request = (text = "hi") => ({
  model: "scripted",
  messages: [{ role: "user" as const, content: text }],
});
const noWait = { sleep: async () => {}, random: () => 0 };

describe("scripted provider", () => {
  it("plays text token by token, then usage and stop", async () => {
    const provider = createScriptedProvider({ script: ["Hello there, <b>world</b>!"] });
    const parts = await collect(provider.stream(request()));
    expect(parts[0]).toMatchObject({ type: "start", model: "scripted" });
    const texts = parts.filter((part) => part.type === "text").map((part) => part.text);
    expect(texts).toEqual(["Hello", " there,", " <b>world</b>!"]);
    expect(parts.at(-1)).toEqual({ type: "stop", reason: "end", providerReason: "end" });
    const message = assembleMessage("scripted", parts);
    expect(messageText(message)).toBe("Hello there, <b>world</b>!");
    expect(message.usage.outputTokens).toBe(3);
    expect(message.usage.inputTokens).toBe(1);
  });

  it("streams reasoning, text and tool calls as separate blocks and reports tool-use", async () => {
    const provider = createScriptedProvider({
      script: [
        {
          reasoning: "think",
          text: "ok",
          toolCalls: [{ name: "search", input: { q: "cats and dogs" } }],
        },
      ],
      tokens: "char",
    });
    const message = assembleMessage("scripted", await collect(provider.stream(request())));
    expect(message.content).toEqual([
      { type: "reasoning", text: "think" },
      { type: "text", text: "ok" },
      {
        type: "tool-call",
        id: "call_1_0",
        name: "search",
        input: { q: "cats and dogs" },
        inputText: '{"q":"cats and dogs"}',
      },
    ]);
    expect(message.stopReason).toBe("tool-use");
  });

  it("plays turns in order and picks turns whose `when` matches the last user message", async () => {
    const provider = createScriptedProvider({
      script: [{ text: "about cats", when: "cat" }, "first", "second"],
    });
    const text = async (input: string) =>
      messageText(assembleMessage("scripted", await collect(provider.stream(request(input)))));
    expect(await text("tell me about a cat")).toBe("about cats");
    expect(await text("x")).toBe("first");
    expect(await text("y")).toBe("second");
    const last = await collect(provider.stream(request("z")));
    expect(last.at(-1)).toMatchObject({ type: "error", error: { code: "provider.bad-request" } });
    expect(provider.requests).toHaveLength(4);
  });

  it("retries a retryable failure before the first byte, with a retry part", async () => {
    const provider = createScriptedProvider({
      script: [{ text: "done", error: { code: "provider.overloaded", times: 2 } }],
      transport: noWait,
    });
    const parts = await collect(provider.stream(request()));
    expect(parts.filter((part) => part.type === "retry").map((part) => part.attempt)).toEqual([
      1, 2,
    ]);
    expect(parts.at(-1)?.type).toBe("stop");
    expect(messageText(assembleMessage("scripted", parts))).toBe("done");
  });

  it("does not retry a failure that is not retryable", async () => {
    const provider = createScriptedProvider({
      script: [{ text: "never", error: { code: "provider.auth" } }],
      transport: noWait,
    });
    const parts = await collect(provider.stream(request()));
    expect(parts.map((part) => part.type)).toEqual(["error"]);
  });

  it("ends a stream that fails mid-way with an error part and keeps what came before", async () => {
    const provider = createScriptedProvider({
      script: [
        { text: "one two three four", error: { code: "provider.connection", afterTokens: 2 } },
      ],
      transport: noWait,
    });
    const parts = await collect(provider.stream(request()));
    expect(parts.some((part) => part.type === "retry")).toBe(false);
    const message = assembleMessage("scripted", parts);
    expect(messageText(message)).toBe("one two");
    expect(message.stopReason).toBe("error");
    expect(message.error?.code).toBe("provider.connection");
  });

  it("paces tokens with the injected sleep and stops when cancelled", async () => {
    const waits: number[] = [];
    const controller = new AbortController();
    const provider = createScriptedProvider({
      script: ["a b c d e"],
      timing: { firstTokenMs: 500, tokenMs: 20 },
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length === 3) controller.abort();
      },
    });
    const parts: StreamPart[] = [];
    for await (const part of provider.stream(request(), { signal: controller.signal }))
      parts.push(part);
    expect(waits.slice(0, 3)).toEqual([500, 20, 20]);
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: "provider.cancelled" } });
  });

  it("ends a stalled stream with an idle timeout", async () => {
    const provider = createScriptedProvider({
      script: ["a b"],
      timing: { tokenMs: 1 },
      // Never resolves: only the transport's idle timer can end the wait.
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason)),
        ),
      transport: { idleTimeoutMs: 20, maxAttempts: 1 },
    });
    const parts = await collect(provider.stream(request()));
    expect(parts.at(-1)).toMatchObject({
      type: "error",
      error: { code: "provider.idle-timeout", retryable: true },
    });
  });

  it("splits tokens by words, code points or fixed sizes", () => {
    expect(splitTokens("  a bc\n", "word")).toEqual(["  a", " bc", "\n"]);
    expect(splitTokens("é😀x", "char")).toEqual(["é", "😀", "x"]);
    expect(splitTokens("abcde", 2)).toEqual(["ab", "cd", "e"]);
  });

  it("loads scripts from YAML and rejects bad ones with the field path", () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-script-"));
    const good = join(dir, "good.yaml");
    writeFileSync(good, "model: demo\nturns:\n  - hello\n  - text: bye\n    stopReason: end\n");
    expect(loadScript(good)).toEqual({
      model: "demo",
      turns: ["hello", { text: "bye", stopReason: "end" }],
    });
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "- text: 3\n");
    expect(() => loadScript(bad)).toThrow(ConfigError);
    expect(() => loadScript(bad)).toThrow(/bad\.yaml/);
    expect(() => loadScript(join(dir, "missing.yaml"))).toThrow(/cannot read/);
  });
});
