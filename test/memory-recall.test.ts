import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMemoryIndex,
  createOpenAiEmbedder,
  type MemoryIndex,
  openSqliteMemory,
} from "../src/memory/index.js";
import type { AnyNewEvent } from "../src/spec/index.js";
import { type EmbeddingServer, startEmbeddingServer } from "./support/embedding-server.js";
import { continuityStart, pinEvent, summaryEvent, turnEvent, write } from "./support/memory-log.js";
import { useTempStore } from "./support/transcripts.js";

/**
 * The recall set: 32 sessions of one user, each with the summary a summarizer wrote of it (and a
 * few pinned facts), and 40 questions asked later in a new session, phrased otherwise.
 */
interface RecallSet {
  actor: string;
  sessions: { id: string; summary: string; facts: { id: string; text: string }[] }[];
  questions: { question: string; answer: string }[];
}

const set = JSON.parse(
  readFileSync(new URL("./fixtures/memory/sessions.json", import.meta.url), "utf8"),
) as RecallSet;
const temp = useTempStore("spool-memory-recall-");
let server: EmbeddingServer;

beforeAll(async () => {
  server = await startEmbeddingServer();
});
afterAll(async () => {
  await server.close();
});

async function recallAt5(index: MemoryIndex): Promise<{ recall: number; missed: string[] }> {
  const missed: string[] = [];
  for (const { question, answer } of set.questions) {
    const found = await index.search({
      text: question,
      limit: 5,
      actor: set.actor,
      exclude: ["now"],
    });
    if (!found.hits.some((hit) => hit.continuity === answer)) missed.push(question);
  }
  return { recall: 1 - missed.length / set.questions.length, missed };
}

describe("recall over a multi-session conversation set", () => {
  it("finds the session that stated a fact when a later session asks for it", async () => {
    const store = temp.store;
    const events: AnyNewEvent[] = [];
    for (const session of set.sessions) {
      events.push(...continuityStart(session.id, set.actor));
      events.push(turnEvent(session.id, set.actor, "Let's get started."));
      events.push(
        summaryEvent(session.id, `th-${session.id}`, `sum-${session.id}`, session.summary),
      );
      for (const fact of session.facts) events.push(pinEvent(session.id, fact.id, fact.text));
    }
    events.push(...continuityStart("now", set.actor));
    await write(store, events);

    const fts = createMemoryIndex({ store, backend: openSqliteMemory(":memory:") });
    const hybrid = createMemoryIndex({
      store,
      backend: openSqliteMemory(":memory:"),
      embedder: createOpenAiEmbedder({ model: "loopback-concepts", baseURL: server.baseURL }),
    });
    try {
      const textual = await recallAt5(fts);
      const fused = await recallAt5(hybrid);
      console.log(
        `memory recall@5 over ${set.questions.length} questions, ${set.sessions.length} sessions: full text ${(textual.recall * 100).toFixed(1)}%, hybrid ${(fused.recall * 100).toFixed(1)}%`,
      );
      console.log(`missed by full text: ${textual.missed.join(" | ") || "none"}`);
      console.log(`missed by hybrid: ${fused.missed.join(" | ") || "none"}`);
      expect(textual.recall).toBeGreaterThanOrEqual(FTS_FLOOR);
      expect(fused.recall).toBeGreaterThanOrEqual(HYBRID_FLOOR);
    } finally {
      await fts.close();
      await hybrid.close();
    }
  });
});

/** The floors the set reaches: measured 97.5% (full text) and 100% (hybrid); see docs/memory.md. */
const FTS_FLOOR = 0.95;
const HYBRID_FLOOR = 0.975;
