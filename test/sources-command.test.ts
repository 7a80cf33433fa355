import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createCommandSource,
  type SourceEmission,
  type SourceNoticeEmission,
} from "../src/sources/index.js";
import {
  chunksOf,
  linesOf,
  startSource,
  summarize,
  testDefinition,
} from "./support/source-recorder.js";

function commandSource(command: string, overrides: Parameters<typeof testDefinition>[2] = {}) {
  return createCommandSource(testDefinition("command", command, overrides), { cwd: tmpdir() });
}

function notices(emissions: readonly SourceEmission[]): SourceNoticeEmission[] {
  return emissions.filter(
    (emission): emission is SourceNoticeEmission => emission.type === "notice",
  );
}

/** Whether process `pid` is gone (or a zombie no one reaped yet: it runs no more). */
function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

/** Polls a real condition (a process's state: nothing to wait on) until it holds, with a deadline. */
async function eventually(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("command source", () => {
  it("delivers stdout and stderr lines in their own chunks, each in order, then the exit", async () => {
    const run = startSource(
      commandSource(
        "echo out1; echo err1 >&2; echo out2; printf 'err2\\nerr3' >&2; printf 'out3'",
        { options: { restart: "never" } },
      ),
    );
    await run.done;
    const chunks = chunksOf(run.emissions);
    const of = (channel: string) =>
      chunks.filter((chunk) => chunk.channel === channel).flatMap((chunk) => chunk.lines);
    expect(of("stdout")).toEqual(["out1", "out2", "out3"]);
    expect(of("stderr")).toEqual(["err1", "err2", "err3"]);
    expect(chunks.every((chunk) => chunk.channel !== undefined)).toBe(true);
    expect(run.emissions.slice(-2)).toEqual([
      expect.objectContaining({ type: "notice", code: "source.exited", exitCode: 0 }),
      { type: "exhausted", cursor: { run: 1, stdout_lines: 3, stderr_lines: 3 } },
    ]);
    expect(notices(run.emissions)[0]!.retryInMs).toBeUndefined();
  });

  it("restarts a failing command with a doubling backoff, capped, each run's output new", async () => {
    const run = startSource(
      commandSource("echo attempt; exit 3", {
        options: { backoff_ms: 5, max_backoff_ms: 20, reset_after_ms: 600_000 },
      }),
    );
    await run.until("five exits", (all) => notices(all).length === 5);
    await run.stop();
    const exits = notices(run.emissions).slice(0, 5);
    expect(exits.map((notice) => notice.exitCode)).toEqual([3, 3, 3, 3, 3]);
    expect(exits.map((notice) => notice.retryInMs)).toEqual([5, 10, 20, 20, 20]);
    const runs = chunksOf(run.emissions).map((chunk) => chunk.cursor);
    expect(runs.slice(0, 3)).toEqual([
      { run: 1, stdout_lines: 1, stderr_lines: 0 },
      { run: 2, stdout_lines: 1, stderr_lines: 0 },
      { run: 3, stdout_lines: 1, stderr_lines: 0 },
    ]);
  });

  it("resets the backoff after a run that lasted long enough", async () => {
    const run = startSource(
      commandSource("exit 1", {
        options: { backoff_ms: 5, max_backoff_ms: 100, reset_after_ms: 0 },
      }),
    );
    await run.until("three exits", (all) => notices(all).length === 3);
    await run.stop();
    expect(
      notices(run.emissions)
        .slice(0, 3)
        .map((notice) => notice.retryInMs),
    ).toEqual([5, 5, 5]);
  });

  it("restart: on-failure does not restart a success; always does; a signal is a failure", async () => {
    const success = startSource(commandSource("echo fine"));
    await success.done;
    expect(summarize(success.emissions)).toEqual(["fine", "[notice source.exited]", "[exhausted]"]);

    const always = startSource(
      commandSource("exit 0", { options: { restart: "always", backoff_ms: 1 } }),
    );
    await always.until("two exits", (all) => notices(all).length === 2);
    await always.stop();
    expect(notices(always.emissions)[0]).toMatchObject({ exitCode: 0, retryInMs: 1 });

    const killed = startSource(commandSource("kill -TERM $$", { options: { backoff_ms: 1 } }));
    await killed.until("an exit", (all) => notices(all).length === 1);
    await killed.stop();
    expect(notices(killed.emissions)[0]).toMatchObject({
      exitCode: null,
      retryInMs: 1,
      message: expect.stringContaining("killed by SIGTERM"),
    });
  });

  it("reports a command not found as an exit (127), saying what to check", async () => {
    const run = startSource(
      commandSource("spool-no-such-command-here", { options: { restart: "never" } }),
    );
    await run.done;
    const exit = notices(run.emissions)[0]!;
    expect(exit).toMatchObject({ code: "source.exited", exitCode: 127 });
    expect(exit.message).toContain("no such command");
    expect(linesOf(run.emissions).join("\n")).toContain("not found");
    expect(run.emissions.at(-1)?.type).toBe("exhausted");
  });

  it("fails with source.spawn-failed when the command cannot be started at all", async () => {
    const definition = testDefinition("command", "echo never");
    const cwd = join(tmpdir(), "spool-no-such-directory-here");
    const run = startSource(createCommandSource(definition, { cwd }));
    await run.done;
    expect(run.emissions).toEqual([
      expect.objectContaining({
        type: "failed",
        code: "source.spawn-failed",
        message: expect.stringContaining(cwd),
      }),
    ]);
  });

  it("starts anew after a resume, saying output cannot resume mid-run", async () => {
    const run = startSource(commandSource("echo again", { options: { restart: "never" } }), {
      cursor: { run: 4, stdout_lines: 10, stderr_lines: 0 },
    });
    await run.done;
    expect(run.emissions[0]).toMatchObject({
      type: "rotated",
      reason: "restarted",
      cursor: { run: 5, stdout_lines: 0, stderr_lines: 0 },
    });
    expect(chunksOf(run.emissions)[0]!.cursor).toEqual({
      run: 5,
      stdout_lines: 1,
      stderr_lines: 0,
    });
  });

  it("kills the whole process group on stop: no orphan survives, even one ignoring SIGTERM", async () => {
    const script = [
      "sleep 300 & echo pid $!",
      "sh -c 'trap \"\" TERM; echo pid $$; while :; do sleep 1; done' &",
      "wait",
    ].join("\n");
    const run = startSource(
      commandSource(script, { options: { kill_grace_ms: 200 }, batching: { maxLines: 1 } }),
    );
    await run.until("two pids", (all) => linesOf(all).length === 2);
    const pids = linesOf(run.emissions).map((line) => Number(line.replace("pid ", "")));
    expect(pids.every((pid) => !isGone(pid))).toBe(true);
    await run.stop();
    await eventually("every process of the group to end", () => pids.every(isGone));
  });

  it("sends a held line after maxWaitMs while the command runs on; a runner that stops ends the command", async () => {
    const definition = testDefinition("command", "echo $$; exec sleep 300", {
      batching: { maxLines: 500, maxWaitMs: 5 },
    });
    const emitted: SourceEmission[] = [];
    await createCommandSource(definition, { cwd: tmpdir() }).run({
      cursor: undefined,
      signal: new AbortController().signal,
      emit: async (emission) => {
        emitted.push(emission);
        throw new Error("the runner stopped");
      },
    });
    expect(emitted).toHaveLength(1);
    const pid = Number(linesOf(emitted)[0]);
    expect(pid).toBeGreaterThan(0);
    await eventually("the command to end", () => isGone(pid));
  });

  it("fails with source.invalid-options for options it cannot take", async () => {
    const run = startSource(commandSource("true", { options: { restart: "sometimes" } }));
    await run.done;
    expect(run.emissions).toEqual([
      expect.objectContaining({
        code: "source.invalid-options",
        message: expect.stringContaining("options.restart"),
      }),
    ]);
  });
});
