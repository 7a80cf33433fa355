import fc from "fast-check";
import {
  CONTINUE_TEXT,
  type ContextMessage,
  type PinnedItem,
  type SummaryItem,
  type ThreadView,
} from "../../src/continuity/index.js";
import type { ContentBlock } from "../../src/providers/assembled-message.js";

/** The thread a generated view belongs to, and the thread its carried messages came from. */
export const OWN_THREAD = "t1.c1";
export const FROM_THREAD = "t1";

const FILLER = "the agent reads files runs tools and writes what it found so nothing is lost".split(
  " ",
);

/** `tag` then `words` filler words: the tag makes every text of a history unique. */
export function tagged(tag: string, words: number): string {
  let text = tag;
  for (let i = 0; i < words; i++) text += ` ${FILLER[(i * 7 + tag.length) % FILLER.length]}`;
  return text;
}

/** One piece of a thread's conversation, as the runtime's fold produces it. */
export type Segment =
  | { kind: "turn"; words: number }
  | {
      kind: "step";
      words: number;
      /** Native tool calls in the assistant message. */
      calls: number;
      /**
       * What the step's `loop.decided: continue` added: `tool` results (native calls), a user
       * message of results text, both, or nothing (the run's final step, or a step in flight).
       */
      results: "tool" | "tool+text" | "text" | "none";
      outputWords: number;
    };

const size = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 40, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 1500 }) },
);

const step: fc.Arbitrary<Segment> = fc
  .record({
    words: size,
    calls: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })),
    text: fc.boolean(),
    final: fc.boolean(),
    outputWords: size,
  })
  .map(
    ({ words, calls, text, final, outputWords }): Segment => ({
      kind: "step",
      words,
      calls,
      results: calls > 0 ? (text ? "tool+text" : "tool") : final ? "none" : "text",
      outputWords,
    }),
  );

/** A random conversation: user turns and steps (with and without native tool calls). */
export function segmentsArbitrary(maxLength: number): fc.Arbitrary<Segment[]> {
  return fc
    .array(
      fc.oneof(
        { weight: 1, arbitrary: size.map((words): Segment => ({ kind: "turn", words })) },
        { weight: 3, arbitrary: step },
      ),
      { maxLength },
    )
    .chain((segments) =>
      // A step still in flight (tool calls without results) can only be the newest.
      fc.boolean().map((inFlight) => {
        const last = segments.at(-1);
        if (inFlight && last?.kind === "step" && last.calls > 0) {
          return [...segments.slice(0, -1), { ...last, results: "none" as const }];
        }
        return segments;
      }),
    );
}

/** Builds messages with increasing seqs and unique texts and tool call ids. */
export class HistoryBuilder {
  readonly messages: ContextMessage[] = [];
  seq: number;
  #count = 0;

  constructor(firstSeq = 1) {
    this.seq = firstSeq - 1;
  }

  #tag(kind: string): string {
    this.#count += 1;
    return `${kind}-${this.#count}:`;
  }

  add(segment: Segment, thread?: string): void {
    const owner = thread === undefined ? {} : { thread };
    if (segment.kind === "turn") {
      this.messages.push({
        message: { role: "user", content: tagged(this.#tag("turn"), segment.words) },
        seq: ++this.seq,
        turn: true,
        ...owner,
      });
      return;
    }
    const ids = Array.from({ length: segment.calls }, () => this.#tag("call").slice(0, -1));
    const text = tagged(this.#tag("said"), segment.words);
    const content: string | ContentBlock[] =
      segment.calls === 0
        ? text
        : [
            { type: "text", text },
            ...ids.map(
              (id): ContentBlock => ({
                type: "tool-call",
                id,
                name: "fs_read",
                inputText: JSON.stringify({ path: `${id}.txt` }),
                input: { path: `${id}.txt` },
              }),
            ),
          ];
    this.messages.push({
      message: { role: "assistant", content },
      seq: ++this.seq,
      turn: false,
      ...owner,
    });
    if (segment.results === "none") return;
    // Both result messages come from the step's `loop.decided`: they share its seq.
    const decided = ++this.seq;
    if (segment.results === "tool" || segment.results === "tool+text") {
      this.messages.push({
        message: {
          role: "tool",
          results: ids.map((id) => ({
            toolCallId: id,
            name: "fs_read",
            output: tagged(this.#tag("output"), segment.outputWords),
          })),
        },
        seq: decided,
        turn: false,
        ...owner,
      });
    }
    if (segment.results === "text" || segment.results === "tool+text") {
      this.messages.push({
        message: { role: "user", content: tagged(this.#tag("results"), segment.outputWords) },
        seq: decided,
        turn: false,
        ...owner,
      });
    }
  }

  /** A continuation's instruction to go on, as `handoff.seeded` with `resume` adds it. */
  resume(thread: string): void {
    this.messages.push({
      message: { role: "user", content: CONTINUE_TEXT },
      seq: this.seq,
      turn: false,
      thread,
    });
  }
}

/** Index of the newest user turn of `messages`, or -1. */
export function newestTurnOf(messages: readonly ContextMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]!.turn) return index;
  return -1;
}

/** What a random view is made of. */
export interface ViewShape {
  /** Messages carried over from the thread before (a continuation's seed), oldest first. */
  carried: Segment[] | null;
  resume: boolean;
  own: Segment[];
  /** Words of each summary of the chain, oldest first. */
  summaries: number[];
  pinned: { kind: "rule" | "fact"; words: number; lines: number }[];
}

/** A thread's view: fresh (it starts at a turn) or a continuation (carried messages first). */
export function viewArbitrary(maxSegments = 30): fc.Arbitrary<ThreadView> {
  return fc
    .record({
      carried: fc.option(segmentsArbitrary(6), { nil: null }),
      resume: fc.boolean(),
      own: segmentsArbitrary(maxSegments),
      summaries: fc.array(size, { maxLength: 5 }),
      pinned: fc.array(
        fc.record({
          kind: fc.constantFrom("rule" as const, "fact" as const),
          words: fc.integer({ min: 1, max: 60 }),
          lines: fc.integer({ min: 1, max: 3 }),
        }),
        { maxLength: 4 },
      ),
    })
    .map(buildView);
}

/** The view a shape describes (see `viewArbitrary`). */
export function buildView(shape: ViewShape): ThreadView {
  const builder = new HistoryBuilder(10);
  if (shape.carried) {
    // A seed's trailing messages start at a user message.
    for (const segment of [{ kind: "turn", words: 12 } as const, ...shape.carried]) {
      builder.add(segment, FROM_THREAD);
    }
    if (shape.resume) builder.resume(FROM_THREAD);
    builder.seq += 1000;
  }
  const own =
    shape.carried || shape.own[0]?.kind === "turn"
      ? shape.own
      : [{ kind: "turn", words: 8 } as const, ...shape.own];
  for (const segment of own) builder.add(segment);
  const summaries: SummaryItem[] = shape.summaries.map((words, index) => ({
    id: `${FROM_THREAD}@summary${index + 1}`,
    summarizer: "thread_summary",
    text: tagged(`summary-${index + 1}:`, words),
    tokens: words,
    covers: { thread: FROM_THREAD, from_seq: 1 + index * 100, to_seq: 100 + index * 100 },
  }));
  const pinned: PinnedItem[] = shape.pinned.map((item, index) => ({
    id: `pin${index + 1}`,
    kind: item.kind,
    text: Array.from({ length: item.lines }, (_, line) =>
      tagged(`pin${index + 1}.${line}:`, item.words),
    ).join("\n"),
  }));
  return {
    thread: OWN_THREAD,
    messages: builder.messages,
    newestTurn: newestTurnOf(builder.messages),
    summaries,
    pinned,
  };
}

/** A deep copy of a view: fresh message objects, so no cached token count is reused. */
export function cloneView(view: ThreadView): ThreadView {
  return structuredClone(view);
}
