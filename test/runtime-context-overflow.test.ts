/**
 * A provider that answers "context too long" does not fail the turn: through `spool run` on a
 * loopback OpenAI-compatible server whose real window is smaller than the one Spool was told,
 * the refused step is retried in a continuation thread (a handoff with a summary), the turn
 * completes, and `spool replay --verify` re-derives it all from the log without the server.
 * A continuation that does not fit either fails the turn with the provider's error and its hint.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import { createWorkspace, eventsOf, readEvents, type Workspace } from "./support/cli-e2e.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";

const TIMEOUT = 90_000;
/** Request bodies longer than this are refused: the server's real window. */
const SERVER_LIMIT = 60_000;
const TOO_LONG = {
  status: 400,
  body: {
    error: {
      message:
        "This model's maximum context length is 16384 tokens. However, your messages resulted in 20112 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  },
};

/** The events of the foreground threads (not the summarizer's). */
const foreground = <T extends { stream: { id: string } }>(events: T[]): T[] =>
  events.filter((event) => !event.stream.id.includes("@summary"));

/** A long paste: about 6,000 tokens of text. */
const paste = (label: string) =>
  `${label}: ${"the quick brown fox jumps over the lazy dog ".repeat(600)}`;

describe("a context too long for the server", { timeout: TIMEOUT }, () => {
  let workspace: Workspace;
  let local: LocalModelServer | undefined;

  beforeEach(() => {
    workspace = createWorkspace("spool-overflow-");
  });
  afterEach(async () => {
    await local?.close();
    local = undefined;
    workspace.remove();
  });

  const env = () => ({
    SPOOL_PROVIDER: "compatible",
    SPOOL_BASE_URL: local!.baseURL,
    SPOOL_MODEL: "small-local",
    // What Spool was told; the server's real window is smaller.
    SPOOL_CONTEXT_WINDOW: "65536",
  });
  const turn = (continuity: string, text: string) =>
    runSpool(["run", "assistant", "--continuity", continuity, "--prompt", text], {
      cwd: workspace.dir,
      env: workspace.env(env()),
    });

  it("hands the thread off to a continuation and completes the turn, which replays exactly", async () => {
    local = await startLocalModelServer({
      kind: "plain",
      model: "small-local",
      answer: (body) => {
        if (body.includes("Write the summary now")) {
          return { text: "The user pasted two long texts about a fox.", inputTokens: 900 };
        }
        if (body.length > SERVER_LIMIT) return TOO_LONG;
        return { text: "<response>noted</response>", inputTokens: Math.round(body.length / 4) };
      },
    });
    const first = await turn("overflow", paste("first"));
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const second = await turn("overflow", paste("second"));
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toContain("continued in a new thread");

    const events = await readEvents(workspace.dir, "overflow");
    const refused = eventsOf(events, "loop.decided").filter(
      (event) => event.data.decision === "retry",
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]!.data.reason).toContain("does not fit the model's context window");
    const started = eventsOf(events, "handoff.started");
    expect(started).toHaveLength(1);
    expect(JSON.stringify(started[0]!.data)).toContain("longer than the model's window");
    expect(eventsOf(events, "thread.continued")).toHaveLength(1);
    const runs = foreground(eventsOf(events, "run.completed")).map((event) => event.data.status);
    expect(runs).toEqual(["completed", "continued", "completed"]);
    // The continuation's request fit: the server refused exactly one model call.
    const calls = local.requests.filter((request) => request.path === "/v1/chat/completions");
    expect(
      calls.filter(
        (call) => call.body.length > SERVER_LIMIT && !call.body.includes("Write the summary now"),
      ),
    ).toHaveLength(1);

    const requests = local.requests.length;
    // Without SPOOL_CONTEXT_WINDOW: replay takes the window the run had from the log.
    const replayed = await runSpool(["replay", "overflow", "--verify", "--json"], {
      cwd: workspace.dir,
      env: workspace.env(),
    });
    expect(JSON.parse(replayed.stdout), replayed.stdout + replayed.stderr).toMatchObject({
      identical: true,
      reached: [],
    });
    expect(local.requests.length, "replay calls no model").toBe(requests);
  });

  it("fails the turn with the provider's error when the continuation does not fit either", async () => {
    local = await startLocalModelServer({
      kind: "plain",
      model: "small-local",
      answer: (body) => {
        if (body.includes("Write the summary now")) {
          return { text: "A summary.", inputTokens: 900 };
        }
        return TOO_LONG;
      },
    });
    const result = await turn("hopeless", "hello");
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("SPOOL_CONTEXT_WINDOW");
    const events = await readEvents(workspace.dir, "hopeless");
    expect(
      foreground(eventsOf(events, "loop.decided")).map((event) => event.data.decision),
    ).toEqual(["retry", "fail"]);
    expect(eventsOf(events, "run.completed").at(-1)?.data).toMatchObject({
      status: "failed",
      error: { code: "provider.context-too-long" },
    });
  });
});
