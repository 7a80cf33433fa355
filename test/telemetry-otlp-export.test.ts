/**
 * Live OpenTelemetry export through `spool run` with the real OpenAI SDK against a loopback
 * model server, into a loopback OTLP/HTTP collector: a run with two tool actions (one fails)
 * and a handoff to a continuation thread, then a second turn there. What the collector got is
 * exactly what `spool trace --json` folds from the log afterwards: same trees, ids, times and
 * attributes. Message content appears only when asked for.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ATTR, type TraceTree } from "../src/telemetry/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, eventsOf, readEvents, type Workspace } from "./support/cli-e2e.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.js";
import {
  bySpanId,
  flattenTrees,
  fromReceived,
  fromRecord,
  outline,
} from "./support/trace-spans.js";

const TIMEOUT = 60_000;
const ACTIONS =
  '<thought>checking</thought><action type="tool" mode="sync" id="a1">{"name":"clock.now","parameters":{}}</action>' +
  '<action type="tool" mode="sync" id="a2">{"name":"fs.read","parameters":{"path":"missing.txt"}}</action>';

describe("live trace export", { timeout: TIMEOUT }, () => {
  let workspace: Workspace;
  let model: LocalModelServer;
  let collector: OtlpReceiver;

  beforeEach(async () => {
    workspace = createWorkspace("spool-otel-");
    collector = await startOtlpReceiver();
    let calls = 0;
    model = await startLocalModelServer({
      kind: "plain",
      model: "small-local",
      answer: (body) => {
        if (body.includes("Write the summary now")) {
          return { text: "The user asked for the time twice.", inputTokens: 300 };
        }
        calls += 1;
        // Turn 1: the actions, then an answer whose usage crosses the handoff trigger.
        if (calls === 1) return { text: ACTIONS, inputTokens: 2000 };
        return { text: "<response>It is noon.</response>", inputTokens: 15_500 };
      },
    });
  });
  afterEach(async () => {
    await model.close();
    await collector.close();
    workspace.remove();
  });

  const env = (extra: Record<string, string> = {}) =>
    workspace.env({
      SPOOL_PROVIDER: "compatible",
      SPOOL_BASE_URL: model.baseURL,
      SPOOL_MODEL: "small-local",
      SPOOL_CONTEXT_WINDOW: "16384",
      ...extra,
    });
  const spool = (args: string[], extra?: Record<string, string>) =>
    runSpool(args, { cwd: workspace.dir, env: env(extra) });

  it("sends each run's span tree as the log has it, and spool trace gives the same spans", async () => {
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
    const first = await spool(
      ["run", "assistant", "--continuity", "home", "--prompt", "time?"],
      otel,
    );
    expect(first.code, first.stderr).toBe(0);
    const second = await spool(
      ["run", "assistant", "--continuity", "home", "--prompt", "again?"],
      otel,
    );
    expect(second.code, second.stderr).toBe(0);
    const events = await readEvents(workspace.dir, "home");
    expect(eventsOf(events, "thread.continued")).toHaveLength(1);

    const traced = await spool(["trace", "home", "--json"]);
    expect(traced.code, traced.stderr).toBe(0);
    const printed = JSON.parse(traced.stdout) as { continuity: string; traces: TraceTree[] };
    expect(printed.continuity).toBe("home");
    expect(outline(printed.traces)).toEqual([
      "trace",
      "  invoke_agent assistant",
      "    chat small-local",
      "    chat small-local",
      "    execute_tool clock.now",
      "    execute_tool fs.read !",
      "    invoke_agent thread_summary",
      "      chat small-local",
      "trace",
      "  handoff assistant",
      "trace",
      "  invoke_agent assistant",
      "    chat small-local",
      "    invoke_agent thread_summary",
      "      chat small-local",
    ]);

    // Live export sent exactly these spans: ids, parents, times, attributes, statuses.
    const spans = flattenTrees(printed.traces);
    expect(bySpanId(collector.spans.map(fromReceived))).toEqual(bySpanId(spans.map(fromRecord)));
    expect(collector.requests.every((request) => request.contentType.includes("json"))).toBe(true);
    expect(collector.spans.every((span) => span.resource["service.name"] === "spool")).toBe(true);
    for (const span of spans) expect(span.attributes[ATTR.conversationId]).toBe("home");

    const [turnOne, handoff, turnTwo] = printed.traces as [TraceTree, TraceTree, TraceTree];
    const run = turnOne.roots[0]!;
    const thread = eventsOf(events, "thread.continued")[0]!.stream.id;
    expect(run.kind).toBe("internal");
    expect(run.attributes).toMatchObject({
      [ATTR.operationName]: "invoke_agent",
      [ATTR.agentName]: "assistant",
      [ATTR.providerName]: "compatible",
      [ATTR.requestModel]: "small-local",
      [ATTR.threadId]: thread,
      [ATTR.runStatus]: "completed",
      [ATTR.inputTokens]: 17_500,
      [ATTR.outputTokens]: 10,
    });
    const chats = run.children.filter((span) => span.name.startsWith("chat "));
    expect(chats.map((chat) => chat.kind)).toEqual(["client", "client"]);
    expect(chats[0]!.attributes).toMatchObject({
      [ATTR.operationName]: "chat",
      [ATTR.providerName]: "compatible",
      [ATTR.requestModel]: "small-local",
      [ATTR.responseModel]: "small-local",
      [ATTR.responseId]: "chatcmpl-local",
      [ATTR.finishReasons]: ["stop"],
      [ATTR.inputTokens]: 2000,
      [ATTR.outputTokens]: 5,
      [ATTR.cacheReadTokens]: 0,
      [ATTR.cacheCreationTokens]: 0,
    });
    const tools = run.children.filter((span) => span.name.startsWith("execute_tool "));
    const clock = tools.find((span) => span.name === "execute_tool clock.now")!;
    const read = tools.find((span) => span.name === "execute_tool fs.read")!;
    expect(clock.attributes).toMatchObject({
      [ATTR.operationName]: "execute_tool",
      [ATTR.toolName]: "clock.now",
      [ATTR.toolCallId]: "a1",
      [ATTR.toolType]: "function",
    });
    expect(clock.status.code).toBe("unset");
    const failed = eventsOf(events, "action.failed")[0]!;
    expect(read.status).toEqual({ code: "error", message: failed.data.error.message });
    expect(read.attributes[ATTR.errorType]).toBe(failed.data.error.code);
    expect(read.attributes[ATTR.toolCallId]).toBe("a2");

    // The handoff names both threads; the next turn's run links to it.
    const hand = handoff.roots[0]!;
    expect(hand.attributes).toMatchObject({
      [ATTR.handoffFrom]: thread,
      [ATTR.handoffContinuation]: `${thread}.c1`,
      [ATTR.handoffMode]: "summary",
    });
    const next = turnTwo.roots[0]!;
    expect(next.attributes[ATTR.threadId]).toBe(`${thread}.c1`);
    expect(next.links).toEqual([
      { traceId: hand.traceId, spanId: hand.spanId, attributes: { "spool.link": "handoff" } },
    ]);

    // No content unless asked for; with --content the run's messages and tool I/O are there.
    const keys = spans.flatMap((span) => Object.keys(span.attributes));
    expect(keys).not.toContain(ATTR.inputMessages);
    expect(keys).not.toContain(ATTR.toolCallArguments);
    const withContent = await spool(["trace", "home", "--json", "--content"]);
    const full = flattenTrees((JSON.parse(withContent.stdout) as { traces: TraceTree[] }).traces);
    const fullRun = full.find((span) => span.spanId === run.spanId)!;
    expect(JSON.parse(String(fullRun.attributes[ATTR.inputMessages]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "time?" }] },
    ]);
    expect(JSON.parse(String(fullRun.attributes[ATTR.outputMessages]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "It is noon." }] },
    ]);
    const fullRead = full.find((span) => span.spanId === read.spanId)!;
    expect(JSON.parse(String(fullRead.attributes[ATTR.toolCallArguments]))).toEqual({
      path: "missing.txt",
    });
  });

  it("exports after the fact to a collector, and filters by turn", async () => {
    const run = await spool(["run", "assistant", "--continuity", "later", "--prompt", "time?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(collector.spans).toEqual([]);
    const turn = eventsOf(await readEvents(workspace.dir, "later"), "turn.added")[0]!.id;
    const sent = await spool(["trace", "later", "--otlp", collector.endpoint, "--run", turn]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^exported \d+ span\(s\) of 1 trace\(s\); 0 failed/);
    const json = await spool(["trace", "later", "--json", "--run", turn]);
    const spans = flattenTrees((JSON.parse(json.stdout) as { traces: TraceTree[] }).traces);
    expect(bySpanId(collector.spans.map(fromReceived))).toEqual(bySpanId(spans.map(fromRecord)));
    expect(new Set(spans.map((span) => span.attributes[ATTR.turnId]))).toEqual(
      new Set([turn, undefined]),
    );
    const unknown = await spool([
      "trace",
      "later",
      "--json",
      "--run",
      "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no run of turn or thread");
  });
});
