import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { requestDigest } from "../src/continuity/index.js";
import type { ProviderMessage, ProviderRequest } from "../src/providers/index.js";
import { canonicalJson, seededRandom } from "../src/spec/index.js";

/** The digest as defined: sha256 of the whole request's canonical JSON, computed afresh. */
const wholeDigest = (request: ProviderRequest) =>
  createHash("sha256")
    .update(canonicalJson(structuredClone(request)))
    .digest("hex");

const TOOLS: NonNullable<ProviderRequest["tools"]>[] = [
  [
    {
      name: "lookup",
      description: "Looks a city up.",
      // A schema holding the request's own key and an empty array: the digest must not split there.
      inputSchema: { type: "object", properties: { messages: { default: [] } } },
    },
  ],
  [{ name: "fs.read", description: 'Reads "messages":[] files', inputSchema: { type: "object" } }],
];

/** A random message; text that looks like the request's own JSON now and then. */
function message(random: () => number, n: number): ProviderMessage {
  const text = random() < 0.1 ? `"messages":[] ${n} ünïcode 🧵` : `message ${n}`;
  switch (Math.floor(random() * 3)) {
    case 0:
      return { role: "user", content: text };
    case 1:
      return {
        role: "assistant",
        content: [
          { type: "text", text },
          {
            type: "tool-call",
            id: `c${n}`,
            name: "lookup",
            input: { q: n },
            inputText: JSON.stringify({ q: n }),
          },
        ],
      };
    default:
      return {
        role: "tool",
        results: [{ toolCallId: `c${n}`, name: "lookup", output: text }],
      };
  }
}

describe("requestDigest", () => {
  it("is the sha256 of the whole canonical request over random threads of growing, branching and changing requests", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = seededRandom(seed);
      // A few threads compiled in turns, as concurrent continuities are.
      const threads: ProviderMessage[][] = [[], [], []];
      let system = "You are a bench.";
      let n = 0;
      for (let step = 0; step < 60; step++) {
        const k = Math.floor(random() * threads.length);
        let messages = threads[k]!;
        const roll = random();
        if (roll < 0.6) {
          messages = [...messages, message(random, n++)];
        } else if (roll < 0.7 && messages.length > 1) {
          // A handoff or a cut: an older message replaced by a new object.
          const at = Math.floor(random() * messages.length);
          messages = messages.map((old, i) => (i === at ? { ...old } : old));
        } else if (roll < 0.8 && messages.length > 2) {
          // Older messages left out (the budget): the request starts later.
          messages = messages.slice(Math.floor(random() * messages.length));
        } else if (roll < 0.85) {
          system = `${system} more`;
        } else if (roll < 0.9) {
          // The same text in new objects (merged user messages are made each compile).
          messages = messages.map((old) => structuredClone(old));
        }
        threads[k] = messages;
        const request: ProviderRequest = {
          model: random() < 0.5 ? "m1" : "m2",
          system,
          messages,
          ...(random() < 0.7 ? { tools: TOOLS[Math.floor(random() * TOOLS.length)]! } : {}),
          ...(random() < 0.5 ? { maxOutputTokens: 1000 + Math.floor(random() * 10) } : {}),
        };
        expect(requestDigest(request), `seed ${seed}, step ${step}`).toBe(wholeDigest(request));
      }
    }
  });

  it("gives the same digest for the same request twice, and another one for any change", () => {
    const messages: ProviderMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
    ];
    const request: ProviderRequest = { model: "m", system: "s", messages };
    const first = requestDigest(request);
    expect(requestDigest({ ...request, messages: [...messages] })).toBe(first);
    expect(requestDigest({ ...request, system: "t" })).not.toBe(first);
    expect(requestDigest({ ...request, messages: messages.slice(0, 1) })).not.toBe(first);
    expect(requestDigest({ ...request, messages: [...messages, messages[1]!] })).not.toBe(first);
  });
});
