/**
 * How Spool answers a server's `elicitation/create` with nobody to ask: accept with the
 * schema's defaults when every required field has one, decline otherwise, and decline garbage
 * with a reason that names what was wrong.
 */
import { describe, expect, it } from "vitest";
import { answerElicitation, loggableContent } from "../src/mcp/mcp-elicitation.js";

const form = (properties: Record<string, unknown>, required?: string[]) => ({
  message: "Please fill in",
  requestedSchema: { type: "object", properties, ...(required ? { required } : {}) },
});

describe("answerElicitation", () => {
  it("accepts with every default (SEP-1034), leaving out optional fields without one", () => {
    const answer = answerElicitation(
      form({
        name: { type: "string", default: "John Doe" },
        age: { type: "integer", default: 30 },
        score: { type: "number", minimum: 0, maximum: 100, default: 95.5 },
        status: { type: "string", enum: ["active", "inactive"], default: "active" },
        hero: { type: "string", oneOf: [{ const: "h1", title: "One" }], default: "h1" },
        fish: {
          type: "array",
          items: { anyOf: [{ const: "f1" }, { const: "f2" }] },
          default: ["f2"],
        },
        verified: { type: "boolean", default: true },
        nickname: { type: "string" },
      }),
      "defaults",
    );
    expect(answer).toEqual({
      action: "accept",
      content: {
        name: "John Doe",
        age: 30,
        score: 95.5,
        status: "active",
        hero: "h1",
        fish: ["f2"],
        verified: true,
      },
      request: {
        mode: "form",
        message: "Please fill in",
        fields: ["name", "age", "score", "status", "hero", "fish", "verified", "nickname"],
      },
    });
  });

  it("declines a required field without a default: there is nobody to ask", () => {
    const answer = answerElicitation(
      form({ name: { type: "string" }, check: { type: "boolean", default: false } }, ["name"]),
      "defaults",
    );
    expect(answer.action).toBe("decline");
    expect(answer.content).toBeUndefined();
    expect(answer.decline).toEqual({
      code: "elicitation.required-without-default",
      message: 'required field "name" has no default, and there is no person to ask',
    });
  });

  it("declines everything under the decline policy", () => {
    const answer = answerElicitation(form({ a: { type: "string", default: "x" } }), "decline");
    expect(answer).toMatchObject({
      action: "decline",
      decline: { code: "elicitation.policy-decline" },
      request: { fields: ["a"] },
    });
  });

  it("declines URL mode, which needs a person at a browser", () => {
    const answer = answerElicitation(
      { mode: "url", message: "Open this", url: "https://example.com/x", elicitationId: "e1" },
      "defaults",
    );
    expect(answer.decline?.code).toBe("elicitation.url-mode-unsupported");
    expect(answer.request.mode).toBe("url");
  });

  it.each([
    ["no params at all", undefined, "the request has no message string"],
    ["a message that is not a string", { message: 42 }, "the request has no message string"],
    [
      "a schema that is not an object schema",
      { message: "m", requestedSchema: { type: "array" } },
      'requestedSchema must be {"type": "object", "properties": {…}}',
    ],
    [
      "a field of no primitive type",
      form({ nested: { type: "object", default: {} } }),
      'field "nested": type "object" is not string, number, integer, boolean or array',
    ],
    [
      "a default of the wrong type",
      form({ age: { type: "integer", default: "thirty" } }),
      'field "age": default: Invalid input: expected number, received string',
    ],
    [
      "a default outside its own enum",
      form({ status: { type: "string", enum: ["a", "b"], default: "c" } }),
      'field "status": its default "c" is not one of its options',
    ],
    [
      "a default outside its range",
      form({ score: { type: "number", maximum: 10, default: 11 } }),
      'field "score": its default is above its maximum',
    ],
    [
      "a fractional integer default",
      form({ age: { type: "integer", default: 1.5 } }),
      'field "age": its default is not an integer',
    ],
    [
      "a required name that is no field",
      form({ a: { type: "string", default: "x" } }, ["b"]),
      'required field "b" is not a property',
    ],
    [
      "an unknown mode",
      { mode: "telepathy", message: "m" },
      'unknown elicitation mode "telepathy"',
    ],
  ])("declines %s as an invalid request, saying why", (_what, params, message) => {
    const answer = answerElicitation(params, "defaults");
    expect(answer.action).toBe("decline");
    expect(answer.decline).toEqual({ code: "elicitation.invalid-request", message });
  });

  it("redacts the values of secret-looking fields for the log", () => {
    expect(loggableContent({ name: "Ada", apiKey: "k-1", password: "p", token: "t" })).toEqual({
      name: "Ada",
      apiKey: "[redacted]",
      password: "[redacted]",
      token: "[redacted]",
    });
  });
});
