import { describe, expect, it } from "vitest";
import { type ContextBundle, requestDigest } from "../src/continuity/index.js";
import type { CursorCall, ProviderMessage, ProviderRequest } from "../src/providers/index.js";
import { stepRequest, type ThreadCursor } from "../src/runtime/index.js";

// When a step continues the provider's conversation from the thread's cursor, and when it sends
// its whole compiled context: a pure decision over what the log says.

const messages: { message: ProviderMessage; seq: number }[] = [
  { message: { role: "user", content: "Oslo?" }, seq: 3 },
  { message: { role: "assistant", content: "Calling." }, seq: 9 },
  { message: { role: "user", content: "Results: 18" }, seq: 14 },
  { message: { role: "user", content: "And Bergen?" }, seq: 20 },
];
const request: ProviderRequest = {
  model: "gpt-4.1",
  system: "Be brief.",
  messages: messages.map((entry) => entry.message),
};
const bundle = (extra: Partial<ContextBundle> = {}) =>
  ({ request, omitted: 0, ...extra }) as ContextBundle;
const cursor: ThreadCursor = {
  responseId: "resp_9",
  provider: "openai-responses",
  step: "t1:0",
  seq: 9,
};
const responses = { name: "openai-responses", format: "openai-responses" } as const;
const onRotate = () => {};

describe("stepRequest", () => {
  it("continues from the cursor with the messages after its step, merged as they are sent", () => {
    const step = stepRequest({ bundle: bundle(), messages, cursor, provider: responses, onRotate });
    const call = step.request as CursorCall;
    expect(call.cursor).toBe(cursor);
    expect(call.newMessages).toEqual([{ role: "user", content: "Results: 18\n\nAnd Bergen?" }]);
    expect(call.settings).toEqual({ model: "gpt-4.1", system: "Be brief." });
    expect(call.rebuild()).toBe(request);
    expect(step.cursor).toEqual({
      previous_response_id: "resp_9",
      messages: 1,
      digest: requestDigest({
        model: "gpt-4.1",
        system: "Be brief.",
        messages: call.newMessages,
        previousResponseId: "resp_9",
      }),
    });
  });

  it("sends the whole context when there is no cursor, or the provider is not Responses", () => {
    for (const [c, provider] of [
      [null, responses],
      [cursor, { name: "openai", format: "openai-chat" }],
    ] as const) {
      const step = stepRequest({ bundle: bundle(), messages, cursor: c, provider, onRotate });
      expect(step).toEqual({ request });
    }
  });

  it("sends the whole context when the compile left messages out or holds feeds", () => {
    for (const extra of [{ omitted: 2 }, { feeds: "a".repeat(64) }]) {
      const step = stepRequest({
        bundle: bundle(extra),
        messages,
        cursor,
        provider: responses,
        onRotate,
      });
      expect(step).toEqual({ request });
    }
  });

  it("sends the whole context when the cursor's message is not in it, or nothing came after it", () => {
    const gone = { ...cursor, seq: 8 };
    expect(
      stepRequest({ bundle: bundle(), messages, cursor: gone, provider: responses, onRotate }),
    ).toEqual({ request });
    const last = { ...cursor, seq: 20 };
    expect(
      stepRequest({ bundle: bundle(), messages, cursor: last, provider: responses, onRotate }),
    ).toEqual({ request });
  });

  it("hands a cursor of another provider to streamWithCursor (which rotates it), logging no cursor", () => {
    const other = { name: "azure-responses", format: "openai-responses" } as const;
    const step = stepRequest({ bundle: bundle(), messages, cursor, provider: other, onRotate });
    expect(step.cursor).toBeUndefined();
    expect((step.request as CursorCall).cursor).toBe(cursor);
    expect((step.request as CursorCall).rebuild()).toBe(request);
  });
});
