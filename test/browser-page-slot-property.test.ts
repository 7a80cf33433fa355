import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compileContext,
  mergeUserMessages,
  messageTokens,
  messageToSeed,
  planInputCuts,
  renderTranscript,
  textTokens,
} from "../src/continuity/index.js";
import type { ProviderMessage, UserPart } from "../src/providers/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator } from "../src/providers/tokens/index.js";
import {
  formatActionResults,
  type ReportedAction,
  stepRequest,
  ThreadHistory,
} from "../src/runtime/index.js";
import { EVENT_CATALOG, type SpoolEvent } from "../src/spec/index.js";

const MODEL = "claude-sonnet-4-5";
const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });

/** One action of a generated step. */
interface Act {
  kind: "snapshot" | "diff" | "screenshot" | "other" | "failed-snapshot";
  native: boolean;
}

const actArb: fc.Arbitrary<Act> = fc.record({
  kind: fc.constantFrom("snapshot", "diff", "screenshot", "other", "failed-snapshot"),
  native: fc.boolean(),
});
const stepsArb = fc.array(fc.array(actArb, { minLength: 1, maxLength: 4 }), {
  minLength: 1,
  maxLength: 8,
});

/** An action of the generated history, with what it answered. */
interface Planned {
  id: string;
  act: Act;
  name: string;
  output?: Record<string, unknown>;
  page?: number;
}

const url = (page: number) => `http://127.0.0.1:8080/p${page}`;
const hash = (page: number) => createHash("sha256").update(`shot ${page}`).digest("hex");

function plan(steps: Act[][]): Planned[][] {
  let page = 0;
  return steps.map((acts, index) =>
    acts.map((act, position): Planned => {
      const id = `a${index}_${position}`;
      page += 1;
      const where = { tab: "t1", url: url(page), title: `Page ${page}` };
      switch (act.kind) {
        case "snapshot":
          return {
            id,
            act,
            name: "browser.snapshot",
            page,
            output: {
              ...where,
              snapshot: `main:\n  heading "P${page}" [e${page}]`,
              truncated: false,
            },
          };
        case "diff":
          return {
            id,
            act,
            name: "browser.snapshot",
            page,
            output: { ...where, diff: true, snapshot: `+ text "now ${page}"`, truncated: false },
          };
        case "screenshot":
          return {
            id,
            act,
            name: "browser.screenshot",
            page,
            output: { ...where, artifact: hash(page), media_type: "image/png", bytes: 100 },
          };
        case "other":
          return { id, act, name: "fs.read", output: { text: `file ${page} <b>` } };
        default:
          return { id, act, name: "browser.snapshot" };
      }
    }),
  );
}

/** The actions the context holds as a line, computed apart from the runtime's slot. */
function oracleSuperseded(planned: Planned[][], screenshots: number): Set<string> {
  const all = planned.flat().filter((one) => one.page !== undefined);
  const full = all.filter((one) => one.act.kind === "snapshot").at(-1);
  const fullAt = full ? all.indexOf(full) : -1;
  const gone = new Set<string>();
  all.forEach((one, index) => {
    if (index < fullAt && one.act.kind !== "screenshot") gone.add(one.id);
  });
  const shots = all.filter((one) => one.act.kind === "screenshot");
  for (const one of shots.slice(0, Math.max(0, shots.length - screenshots))) gone.add(one.id);
  return gone;
}

function line(one: Planned, none: boolean): string {
  const page = one.page!;
  if (one.act.kind === "screenshot") {
    const why = none
      ? "not kept in the context (browser.screenshots_in_context is 0)"
      : "replaced by a later screenshot";
    return `[screenshot of ${url(page)} "Page ${page}" (tab t1), artifact ${hash(page)}: ${why}]`;
  }
  const diff = one.act.kind === "diff" ? " (diff)" : "";
  return `[browser.snapshot${diff} of ${url(page)} "Page ${page}" (tab t1): superseded by a later snapshot]`;
}

let seq = 0;
function event(type: string, data: unknown, stream: { kind: string; id: string }): SpoolEvent {
  seq += 1;
  return {
    seq,
    id: `e${seq}`,
    continuity: "c",
    stream,
    type,
    ts: "2026-11-26T10:00:00Z",
    actor: null,
    origin: null,
    criticality: "critical",
    data,
    hash: "",
  } as unknown as SpoolEvent;
}

/** The events of one step of `thread`: the model's message, its actions, the loop's decision. */
function stepEvents(thread: string, index: number, acts: Planned[]): SpoolEvent[] {
  const stream = { kind: "step", id: `${thread}:${index}` };
  const calls = acts
    .filter((one) => one.act.native)
    .map((one) => ({
      type: "tool-call",
      id: one.id,
      name: one.name.replace(".", "_"),
      input: {},
      input_text: "{}",
    }));
  const events = [
    event(
      "message.completed",
      {
        format: "anthropic",
        provider: "test",
        model: MODEL,
        response_id: null,
        content: [{ type: "text", text: `step ${index}` }, ...calls],
        usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
        stop_reason: calls.length > 0 ? "tool-use" : "end",
        provider_stop_reason: null,
      },
      stream,
    ),
  ];
  for (const one of acts) {
    events.push(
      event(
        "action.dispatched",
        { action_id: one.id, type: "tool", mode: "sync", name: one.name, parameters: {} },
        stream,
      ),
    );
    events.push(
      one.output
        ? event("action.succeeded", { action_id: one.id, attempt: 1, output: one.output }, stream)
        : event(
            "action.failed",
            { action_id: one.id, error: { code: "relic.browser.crashed", message: "gone" } },
            stream,
          ),
    );
  }
  events.push(
    event(
      "loop.decided",
      { step: `${thread}:${index}`, decision: "continue", reason: "actions ran" },
      { kind: "thread", id: thread },
    ),
  );
  return events;
}

/** The result messages the compiled request must hold, in order, built apart from the history. */
function expectedResults(
  planned: Planned[][],
  gone: Set<string>,
  screenshots: number,
): ProviderMessage[] {
  const shown = (one: Planned): ReportedAction =>
    one.output
      ? {
          id: one.id,
          type: "tool",
          name: one.name,
          status: "succeeded",
          output: gone.has(one.id) ? line(one, screenshots === 0) : one.output,
        }
      : {
          id: one.id,
          type: "tool",
          name: one.name,
          status: "failed",
          error: { code: "relic.browser.crashed", message: "gone" },
        };
  const image = (one: Planned) => ({
    type: "image" as const,
    mediaType: "image/png",
    data: "",
    artifact: hash(one.page!),
  });
  const imaged = (one: Planned) =>
    one.act.kind === "screenshot" && one.output !== undefined && !gone.has(one.id);
  const messages: ProviderMessage[] = [];
  for (const acts of planned) {
    const native = acts.filter((one) => one.act.native).map(shown);
    const text = acts.filter((one) => !one.act.native).map(shown);
    const images = acts.filter((one) => !one.act.native && imaged(one)).map(image);
    if (native.length > 0) {
      messages.push({
        role: "tool",
        results: native.map((action, index) => ({
          toolCallId: action.id,
          name: action.name.replace(".", "_"),
          output:
            action.status === "succeeded"
              ? typeof action.output === "string"
                ? action.output
                : JSON.stringify(action.output)
              : `${action.error!.code}: ${action.error!.message}`,
          isError: action.status !== "succeeded",
          ...(imaged(acts.filter((one) => one.act.native)[index]!)
            ? { images: [image(acts.filter((one) => one.act.native)[index]!)] }
            : {}),
        })),
      });
    }
    if (text.length > 0 || native.length === 0) {
      const results = formatActionResults(text, [], false);
      messages.push({
        role: "user",
        content: images.length > 0 ? [{ type: "text", text: results }, ...images] : results,
      });
    }
  }
  return messages;
}

/** The request's messages that report results: `tool` messages and the results texts. */
function resultsOf(messages: readonly ProviderMessage[]): ProviderMessage[] {
  return messages.filter(
    (message) =>
      message.role === "tool" ||
      (message.role === "user" &&
        (typeof message.content === "string"
          ? message.content.startsWith("<action_results>") || message.content === "<continue/>"
          : message.content[0]?.type === "text" &&
            message.content[0].text.startsWith("<action_results>"))),
  );
}

function compiled(history: ThreadHistory): ProviderMessage[] {
  return compileContext(
    history.view(),
    { name: "browser", system: "You drive a browser." },
    { model: MODEL, budget: 1_000_000 },
    estimator,
  ).request.messages;
}

describe("the browser's current page slot", () => {
  it("keeps the newest snapshot (and the diffs after it) and the newest N screenshots whole, each earlier one as its line, nothing else changed, across a handoff", () => {
    fc.assert(
      fc.property(
        stepsArb,
        fc.integer({ min: 0, max: 3 }),
        fc.option(fc.nat(), { nil: undefined }),
        (steps, screenshots, handoffAt) => {
          const planned = plan(steps);
          let history = new ThreadHistory("t1", { screenshots });
          history.apply(event("run.started", { input: "Buy it." }, { kind: "thread", id: "t1" }));
          const split = handoffAt === undefined ? planned.length : handoffAt % planned.length;
          planned.slice(0, split).forEach((acts, index) => {
            for (const one of stepEvents("t1", index, acts)) history.apply(one);
          });
          if (split < planned.length) {
            // A handoff carries every message so far: the continuation goes on from the seed.
            const trailing = history.view().messages.map(messageToSeed);
            const seeded = {
              from: "t1",
              mode: "trailing-only",
              summaries: [],
              trailing,
              resume: false,
              tokens: { summary: 0, trailing: 1 },
            };
            // What the handoff logs passes the catalog (its page results and image references).
            expect(EVENT_CATALOG["handoff.seeded"].schema.safeParse(seeded).success).toBe(true);
            history = history.successor("t1.c1");
            history.apply(event("handoff.seeded", seeded, { kind: "thread", id: "t1.c1" }));
            planned.slice(split).forEach((acts, index) => {
              for (const one of stepEvents("t1.c1", index, acts)) history.apply(one);
            });
          }
          const gone = oracleSuperseded(planned, screenshots);
          const messages = compiled(history);
          expect(resultsOf(messages)).toEqual(expectedResults(planned, gone, screenshots));
          // Exactly one whole snapshot that is not a diff: the newest.
          const text = JSON.stringify(messages);
          const whole = planned.flat().filter((one) => one.act.kind === "snapshot");
          const shownWhole = whole.filter((one) =>
            text.includes(`heading \\\\\\"P${one.page}\\\\\\"`),
          );
          expect(shownWhole.map((one) => one.id)).toEqual(whole.slice(-1).map((one) => one.id));
          // At most N images: the newest N screenshots.
          const shots = planned.flat().filter((one) => one.act.kind === "screenshot");
          const images = [...text.matchAll(/"artifact":"([0-9a-f]{64})"/g)].map((m) => m[1]).sort();
          const newest = shots.slice(shots.length - Math.min(screenshots, shots.length));
          expect(images).toEqual(newest.map((one) => hash(one.page!)).sort());
        },
      ),
      { numRuns: 300 },
    );
  });

  it("shrinks an earlier snapshot to one line in the next step's request, and its message says when", () => {
    seq = 0;
    const planned = plan([
      [{ kind: "snapshot", native: false }],
      [
        { kind: "other", native: false },
        { kind: "snapshot", native: false },
      ],
    ]);
    const history = new ThreadHistory("t1");
    history.apply(event("run.started", { input: "Buy it." }, { kind: "thread", id: "t1" }));
    for (const one of stepEvents("t1", 0, planned[0]!)) history.apply(one);
    const first = history.view().messages.at(-1)!;
    expect(first.revised).toBeUndefined();
    for (const one of stepEvents("t1", 1, planned[1]!)) history.apply(one);
    const [, , shrunk, , second] = history.view().messages;
    expect(shrunk!.message).toEqual({
      role: "user",
      content: `<action_results>\n<result id="a0_0" type="tool" name="browser.snapshot" status="succeeded">[browser.snapshot of http://127.0.0.1:8080/p1 "Page 1" (tab t1): superseded by a later snapshot]</result>\n</action_results>\nContinue.`,
    });
    expect(shrunk!.revised).toBe(second!.seq);
    expect(shrunk!.pages).toBeUndefined();
    expect(JSON.stringify(second!.message)).toContain("file 2 &lt;b>");
    // A handoff's summarizer reads the thread as the context holds it: the first page as its line.
    const transcript = renderTranscript(history.view().messages.map((entry) => entry.message));
    expect(transcript).toContain(`[browser.snapshot of ${url(1)} "Page 1" (tab t1): superseded`);
    expect(transcript).not.toContain('heading \\"P1\\"');
    expect(transcript).toContain('heading \\"P3\\"');
  });

  it("counts the images it attaches toward the context's tokens", () => {
    const planned = plan([
      [{ kind: "screenshot", native: false }],
      [{ kind: "screenshot", native: true }],
    ]);
    const tokens = (screenshots: number) => {
      const history = new ThreadHistory("t1", { screenshots });
      history.apply(event("run.started", { input: "Look." }, { kind: "thread", id: "t1" }));
      planned.forEach((acts, index) => {
        for (const one of stepEvents("t1", index, acts)) history.apply(one);
      });
      return compileContext(
        history.view(),
        { name: "browser", system: "s" },
        { model: MODEL, budget: 100_000 },
        estimator,
      ).tokens;
    };
    // Each image costs IMAGE_TOKENS (1,600) raw; the lines that replace them cost far less.
    expect(tokens(1) - tokens(0)).toBeGreaterThan(1_400);
    expect(tokens(2) - tokens(1)).toBeGreaterThan(1_400);
  });

  it("composes with input cuts: a cut keeps a results message's images, and a later page shrinks what the cut left", () => {
    const big = (page: number) => ({ text: `${"x".repeat(40_000)} ${page}` });
    const history = new ThreadHistory("t1");
    history.apply(event("run.started", { input: "Look." }, { kind: "thread", id: "t1" }));
    const first: Planned[] = [
      { id: "r1", act: { kind: "other", native: false }, name: "fs.read", output: big(1) },
      ...plan([[{ kind: "screenshot", native: false }]])[0]!.map((one) => ({ ...one, id: "s1" })),
      {
        id: "n1",
        act: { kind: "snapshot", native: true },
        name: "browser.snapshot",
        page: 7,
        output: { tab: "t1", url: url(7), title: "Page 7", snapshot: "y".repeat(40_000) },
      },
    ];
    for (const one of stepEvents("t1", 0, first)) history.apply(one);
    const counts = {
      message: messageTokens(estimator, MODEL),
      text: (text: string) => textTokens(estimator, MODEL, text),
    };
    const cuts = planInputCuts(history.view(), 1_000, counts, (entry, id) =>
      history.whole(entry, id),
    );
    expect(cuts.map((cut) => cut.role).sort()).toEqual(["tool", "user"]);
    for (const cut of cuts) {
      history.apply(
        event(
          "context.input-cut",
          {
            seq: cut.seq,
            role: cut.role,
            ...(cut.toolCallId ? { tool_call_id: cut.toolCallId } : {}),
            chars: cut.text.length,
            tokens: cut.tokens,
            limit: cut.limit,
            kept_chars: cut.keptChars,
            artifact: { hash: "a".repeat(64), size: 1, media_type: "text/plain" },
          },
          { kind: "thread", id: "t1" },
        ),
      );
    }
    const cutText = history.view().messages.at(-1)!;
    const parts = (cutText.message as { content: UserPart[] }).content;
    expect(parts[0]).toMatchObject({ type: "text", text: expect.stringContaining("[input cut:") });
    expect(parts.slice(1)).toEqual([
      { type: "image", mediaType: "image/png", data: "", artifact: hash(1) },
    ]);
    const cutTool = history.view().messages.at(-2)!;
    expect(JSON.stringify(cutTool.message)).toContain("[input cut:");

    // A later snapshot and screenshot: the cut snapshot becomes its line, the cut text loses
    // the old image (the screenshot's result was past the cut) and its whole text names it.
    const later = plan([
      [
        { kind: "other", native: false },
        { kind: "snapshot", native: false },
        { kind: "screenshot", native: false },
      ],
    ])[0]!.map((one, index) => ({ ...one, id: `l${index}`, page: 10 + index }));
    for (const one of stepEvents("t1", 1, later)) history.apply(one);
    const [, , tool, text] = history.view().messages;
    expect(tool!.message).toMatchObject({
      role: "tool",
      results: [
        {
          output: `[browser.snapshot of ${url(7)} "Page 7" (tab t1): superseded by a later snapshot]`,
        },
      ],
    });
    expect(history.whole(tool!, "n1")).toBeUndefined();
    const content = (text!.message as { content: unknown }).content;
    expect(typeof content).toBe("string");
    expect(content).toContain("[input cut:");
    expect(history.whole(text!)).toContain(
      `[screenshot of ${url(1)} "Page 1" (tab t1), artifact ${hash(1)}: replaced by a later screenshot]`,
    );
  });

  it("merges consecutive user messages with images into one of their parts", () => {
    const image = { type: "image" as const, mediaType: "image/png", data: "", artifact: hash(1) };
    expect(
      mergeUserMessages([
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "text", text: "b" }, image] },
        { role: "user", content: "c" },
        { role: "assistant", content: "d" },
        { role: "user", content: "e" },
        { role: "user", content: "f" },
      ]),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
          image,
          { type: "text", text: "c" },
        ],
      },
      { role: "assistant", content: "d" },
      { role: "user", content: "e\n\nf" },
    ]);
  });

  it("sends the whole context instead of continuing from a cursor whose conversation holds a shrunk message", () => {
    const message = (text: string): ProviderMessage => ({ role: "user", content: text });
    const bundle = compileContext(
      {
        thread: "t1",
        messages: [
          { message: message("snapshot one, shrunk"), seq: 1, turn: true, revised: 5 },
          { message: { role: "assistant", content: "ok" }, seq: 3, turn: false },
          { message: message("snapshot two"), seq: 5, turn: false },
        ],
        newestTurn: 0,
        summaries: [],
        pinned: [],
      },
      { name: "browser", system: "s" },
      { model: MODEL, budget: 100_000 },
      estimator,
    );
    const decide = (revised: number | undefined) =>
      stepRequest({
        bundle,
        messages: [
          { message: message("snapshot one, shrunk"), seq: 1, ...(revised ? { revised } : {}) },
          { message: { role: "assistant", content: "ok" }, seq: 3 },
          { message: message("snapshot two"), seq: 5 },
        ],
        cursor: { responseId: "resp_1", provider: "openai", step: "t1:0", seq: 3 },
        provider: { name: "openai", format: "openai-responses" },
        onRotate: () => {},
      });
    // Changed after the provider saw it: the provider's conversation differs, send it all.
    expect(decide(5).cursor).toBeUndefined();
    expect(decide(5).request).toBe(bundle.request);
    // Changed before the cursor's call (that call sent the shrunk form): continue.
    expect(decide(2).cursor?.messages).toBe(1);
    expect(decide(undefined).cursor?.previous_response_id).toBe("resp_1");
  });
});
