import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TRANSCRIPT_USAGE, transcriptCommand } from "../src/cli/commands/transcript.js";
import { type CliIo, createContext, NotFoundError, UsageError } from "../src/cli/context.js";
import { openEventStore } from "../src/log/index.js";
import { rebuildTranscript } from "../src/transcript/index.js";
import { onStep, startThread, tempStore } from "./support/transcripts.js";

let env: Awaited<ReturnType<typeof tempStore>>;
let db: string;
let expected: Buffer;

beforeEach(async () => {
  env = await tempStore("spool-transcript-cli-");
  db = join(env.dir, "store");
  const step = await startThread(env.store, "home", "t1");
  await Promise.all(
    ["Hi", " there", " 👋"].map((text) =>
      env.store.append(onStep("home", step, "token.delta", { block: "text:0", text })),
    ),
  );
  await env.store.append({
    continuity: "home",
    type: "thread.completed",
    stream: { kind: "thread", id: "t1" },
    data: { result: "done" },
  });
  expected = await rebuildTranscript(env.store, "home", "t1");
  await env.store.close();
});
afterEach(() => env.cleanup());

function io() {
  const out = {
    text: "",
    write(chunk: string) {
      out.text += chunk;
    },
  };
  const err = {
    text: "",
    write(chunk: string) {
      err.text += chunk;
    },
  };
  const cliIo: CliIo = { stdout: out, stderr: err, env: {}, cwd: env.dir };
  return { ctx: createContext(cliIo), out, err };
}

describe("spool transcript", () => {
  it("prints the rebuilt transcript.jsonl, finding the thread's continuity", async () => {
    const { ctx, out } = io();
    expect(await transcriptCommand(ctx, ["t1", "--db", db])).toBe(0);
    expect(out.text).toBe(expected.toString());
    expect(out.text.split("\n").filter((line) => line.includes('"token_delta"'))).toHaveLength(3);
    const named = io();
    expect(await transcriptCommand(named.ctx, ["t1", "--continuity", "home", "--db", db])).toBe(0);
    expect(named.out.text).toBe(expected.toString());
  });

  it("--out writes the file (creating its directory) and prints nothing on stdout", async () => {
    const { ctx, out, err } = io();
    expect(await transcriptCommand(ctx, ["t1", "--out", "copy/t1.jsonl", "--db", db])).toBe(0);
    expect(readFileSync(join(env.dir, "copy", "t1.jsonl")).equals(expected)).toBe(true);
    expect(out.text).toBe("");
    expect(err.text).toContain("wrote 6 lines");
  });

  it("unknown threads, continuities and stores are NotFound; bad arguments are usage errors", async () => {
    await expect(transcriptCommand(io().ctx, ["nope", "--db", db])).rejects.toThrow(
      /no thread "nope"/,
    );
    await expect(
      transcriptCommand(io().ctx, ["t1", "--continuity", "elsewhere", "--db", db]),
    ).rejects.toBeInstanceOf(NotFoundError);
    const store = await openEventStore({ db });
    await store.append({
      continuity: "empty",
      type: "continuity.created",
      actor: "ada",
      origin: "t",
      data: {},
    });
    await store.close();
    await expect(
      transcriptCommand(io().ctx, ["t1", "--continuity", "empty", "--db", db]),
    ).rejects.toThrow(/has no events in continuity "empty"/);
    await expect(
      transcriptCommand(io().ctx, ["t1", "--db", join(env.dir, "missing")]),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(transcriptCommand(io().ctx, ["--db", db])).rejects.toBeInstanceOf(UsageError);
    await expect(transcriptCommand(io().ctx, ["a", "b", "--db", db])).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(transcriptCommand(io().ctx, ["bad id!", "--db", db])).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(transcriptCommand(io().ctx, ["t1", "--bogus"])).rejects.toThrow(/unknown option/);
  });

  it("has help text naming every option", () => {
    for (const option of ["<thread>", "--continuity", "--out", "--db", "--help"]) {
      expect(TRANSCRIPT_USAGE.text).toContain(option);
    }
    expect(TRANSCRIPT_USAGE.text.startsWith(`Usage: ${TRANSCRIPT_USAGE.synopsis}\n`)).toBe(true);
  });
});
