import {
  type ChunkSpan,
  CONTINUE_TEXT,
  type ContextMessage,
  cutInputText,
  type PinnedItem,
  positionFromData,
  type RecalledItem,
  type SourceMode,
  type StreamPosition,
  type SummaryItem,
  seedToMessage,
  spanFromData,
  summaryFromData,
  type ThreadView,
  userText,
} from "../continuity/index.js";
import type {
  ContentBlock,
  ImagePart,
  ProviderCursor,
  ProviderMessage,
} from "../providers/index.js";
import { clientToolCalls, fromMessageData } from "../providers/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";
import { type HistorySnapshot, refill, refillList } from "./history-snapshot.js";
import { PageSlot } from "./page-slot.js";
import {
  applyOutcome,
  copyStepRecord,
  resultMessages,
  type StepRecord,
  wholeResults,
} from "./step-results.js";

/** The `screenshots` of a history's start from the runtime's options (nothing when unset). */
export function screenshotsOf(options: { screenshotsInContext?: number }): {
  screenshots?: number;
} {
  return options.screenshotsInContext !== undefined
    ? { screenshots: options.screenshotsInContext }
    : {};
}

/** A thread's provider cursor, with the seq of the `message.completed` that carried it. */
export interface ThreadCursor extends ProviderCursor {
  seq: number;
}

/** One message of a thread's conversation, with the log position it came from. */
export type HistoryMessage = ContextMessage;

/** Where a thread's history starts reading, and what it knows from before that point. */
export interface HistoryStart {
  /** The seq it has already seen (it reads after it). Default 0: the whole continuity. */
  after?: number;
  /** Turns added before `after` that no run has taken yet, by turn id. */
  turns?: ReadonlyMap<string, string>;
  /** The continuity's pinned items as of `after`. */
  pinned?: ReadonlyMap<string, PinnedItem>;
  /** The chunks each of `turns` delivers, for a source's delivery turn, by turn id. */
  turnSources?: ReadonlyMap<string, readonly ChunkSpan[]>;
  /** The images attached to each of `turns` (a screen question's frame), by turn id. */
  turnImages?: ReadonlyMap<string, readonly ImagePart[]>;
  /** The modes of the sources declared before `after`, by source id. */
  sourceModes?: ReadonlyMap<string, SourceMode>;
  /**
   * Browser screenshots the context holds as images, newest first (the manifest's
   * `browser.screenshots_in_context`, default 1); older ones become a line of history.
   */
  screenshots?: number;
}

/**
 * The conversation of one thread as a fold over its events: user turns (from `run.started`), each
 * step's model message (`message.completed`), and, after every `loop.decided: continue`, the
 * step's action results and errors as the next message (a screenshot's image with them). It keeps
 * the browser's current-page slot (`PageSlot`): earlier snapshots, and screenshots beyond the
 * newest `screenshots`, become a line of history as later ones arrive. Live runs, resume and
 * replay all build the model's messages with this fold, so they agree by construction.
 *
 * Contract: `apply` takes the continuity's events in seq order (events of other threads are
 * ignored); `turnText` must know every turn a `run.started` names (feed `turn.added` events
 * through `apply` first: they are remembered until a run takes them).
 */
export class ThreadHistory {
  readonly thread: string;
  readonly #messages: HistoryMessage[] = [];
  readonly #steps = new Map<number, StepRecord>();
  readonly #turns: Map<string, string>;
  readonly #turnSources: Map<string, readonly ChunkSpan[]>;
  readonly #turnImages: Map<string, readonly ImagePart[]>;
  readonly #sourceModes: Map<string, SourceMode>;
  #streams: readonly StreamPosition[] | undefined;
  readonly #variables = new Map<string, unknown>();
  readonly #pinned: Map<string, PinnedItem>;
  readonly #summaries: SummaryItem[] = [];
  /** Memory from other continuities the thread was given (`memory.recalled`), in order. */
  #memories: readonly RecalledItem[] = [];
  readonly #stepPrefix: string;
  /** Results longer than a message holds: the whole text, by tool call id ("" for results text). */
  readonly #wholes = new WeakMap<HistoryMessage, Map<string, string>>();
  #newestTurn = -1;
  #lastSeq: number;
  #cursor: ThreadCursor | null = null;
  /** The browser's current page: which messages hold snapshots and screenshots whole. */
  readonly #pages: PageSlot;

  constructor(thread: string, start: HistoryStart = {}) {
    this.thread = thread;
    this.#stepPrefix = `${thread}:`;
    this.#lastSeq = start.after ?? 0;
    this.#turns = new Map(start.turns);
    this.#pinned = new Map(start.pinned);
    this.#turnSources = new Map(start.turnSources);
    this.#turnImages = new Map(start.turnImages);
    this.#sourceModes = new Map(start.sourceModes);
    this.#pages = new PageSlot(start.screenshots);
  }

  /**
   * A history for another thread that starts where this one is: it has seen the same events, and
   * knows the turns no run has taken and the pinned items (a continuation, the next foreground
   * thread), so it never reads the continuity from the start.
   */
  successor(thread: string): ThreadHistory {
    return new ThreadHistory(thread, {
      after: this.#lastSeq,
      turns: this.#turns,
      pinned: this.#pinned,
      turnSources: this.#turnSources,
      turnImages: this.#turnImages,
      sourceModes: this.#sourceModes,
      screenshots: this.#pages.screenshots,
    });
  }

  /**
   * A copy of the fold's state for `restore`: a thread that applied events ahead of their write
   * (`EventStore.readAhead`) goes back to it when the seqs they were given did not hold.
   */
  snapshot(): HistorySnapshot {
    return {
      messages: [...this.#messages],
      steps: [...this.#steps].map(([index, record]) => [index, copyStepRecord(record)]),
      maps: [this.#turns, this.#turnSources, this.#turnImages, this.#sourceModes].map(
        (map) => new Map(map as Map<string, unknown>),
      ),
      variables: new Map(this.#variables),
      pinned: new Map(this.#pinned),
      summaries: [...this.#summaries],
      scalars: {
        streams: this.#streams,
        memories: this.#memories,
        newestTurn: this.#newestTurn,
        lastSeq: this.#lastSeq,
        cursor: this.#cursor,
      },
      pages: this.#pages.snapshot(),
    };
  }

  /** Goes back to the state `snapshot` took. */
  restore(snapshot: HistorySnapshot): void {
    refillList(this.#messages, snapshot.messages);
    this.#steps.clear();
    for (const [index, record] of snapshot.steps) this.#steps.set(index, copyStepRecord(record));
    const maps = [this.#turns, this.#turnSources, this.#turnImages, this.#sourceModes];
    for (const [i, map] of maps.entries()) refill(map as Map<string, unknown>, snapshot.maps[i]!);
    refill(this.#variables, snapshot.variables);
    refill(this.#pinned, snapshot.pinned);
    refillList(this.#summaries, snapshot.summaries);
    const { scalars } = snapshot;
    this.#streams = scalars.streams;
    this.#memories = scalars.memories;
    this.#newestTurn = scalars.newestTurn;
    this.#lastSeq = scalars.lastSeq;
    this.#cursor = scalars.cursor;
    this.#pages.restore(snapshot.pages);
  }

  /** What the context compiler reads: messages, the newest turn, summaries and pins. */
  view(): ThreadView {
    return {
      thread: this.thread,
      messages: this.#messages,
      newestTurn: this.#newestTurn,
      summaries: this.#summaries,
      pinned: [...this.#pinned.values()],
      ...(this.#memories.length > 0 ? { memories: this.#memories } : {}),
      ...(this.#streams ? { streams: this.#streams } : {}),
      ...(this.#sourceModes.size > 0 ? { sourceModes: this.#sourceModes } : {}),
    };
  }

  /** The summary chain of the thread's lineage, oldest first (from its `handoff.seeded`). */
  summaries(): readonly SummaryItem[] {
    return this.#summaries;
  }

  /** The continuity's pinned rules and facts, in the order they were pinned. */
  pinned(): readonly PinnedItem[] {
    return [...this.#pinned.values()];
  }

  /**
   * The whole text of an input a message of this history holds only part of (a tool's output
   * longer than `RESULT_TEXT_MAX`), for `toolCallId`'s result or the results text; `undefined`
   * when the message holds it whole.
   */
  whole(entry: HistoryMessage, toolCallId?: string): string | undefined {
    return this.#wholes.get(entry)?.get(toolCallId ?? "");
  }

  /**
   * The thread's provider cursor: the response id of its newest model message when that message
   * came from OpenAI Responses, with the seq of its `message.completed`; null after a later
   * message in another format or a `provider.cursor-rotated` (as `providerCursorProjection`).
   */
  cursor(): ThreadCursor | null {
    return this.#cursor;
  }

  /** The seq of the last event applied. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * The thread's `$variables` so far: every `variable.set` (an `output_key`, `set_variable`) and
   * `variable.deleted` of its steps, so a later step (or a resumed run) sees earlier results.
   */
  variables(): Record<string, unknown> {
    return Object.fromEntries(this.#variables);
  }

  /** Applies one event of the continuity. */
  apply(event: SpoolEvent): void {
    this.#lastSeq = Math.max(this.#lastSeq, event.seq);
    const { stream } = event;
    if (event.type === "turn.added" && stream.kind === "continuity") {
      const data = event.data as EventData<"turn.added">;
      this.#turns.set(event.id, data.text);
      if (data.sources) this.#turnSources.set(event.id, data.sources.map(spanFromData));
      const images = turnImages(data.attachments);
      if (images.length > 0) this.#turnImages.set(event.id, images);
      return;
    }
    if (event.type === "commentary.added" && stream.kind === "continuity") {
      // What the agent said about the screen on its own is part of the conversation it knows,
      // once the thread has one (a thread's first turn comes before any commentary it sees).
      if (this.#messages.length === 0) return;
      const data = event.data as EventData<"commentary.added">;
      this.#messages.push({
        message: { role: "assistant", content: `<response>${data.text}</response>` },
        seq: event.seq,
        turn: false,
      });
      return;
    }
    if (event.type === "source.added") {
      const data = event.data as EventData<"source.added">;
      const mode = data.definition.mode;
      if (mode === "cursor" || mode === "state") this.#sourceModes.set(data.source_id, mode);
      return;
    }
    if (event.type === "context.pinned") {
      const data = event.data as EventData<"context.pinned">;
      this.#pinned.delete(data.id);
      this.#pinned.set(data.id, { id: data.id, kind: data.kind, text: data.text });
      return;
    }
    if (event.type === "context.unpinned") {
      this.#pinned.delete((event.data as EventData<"context.unpinned">).id);
      return;
    }
    if (stream.kind === "thread" && stream.id === this.thread) {
      this.#applyThread(event);
      return;
    }
    if (stream.kind === "step" && stream.id.startsWith(this.#stepPrefix)) {
      const index = Number(stream.id.slice(this.#stepPrefix.length));
      if (Number.isInteger(index) && index >= 0) this.#applyStep(this.#step(index), event);
    }
  }

  #applyThread(event: SpoolEvent): void {
    if (event.type === "run.started") {
      const data = event.data as EventData<"run.started">;
      const turn = data.turn;
      const text = turn === undefined ? data.input : this.#turns.get(turn);
      const sources = turn === undefined ? undefined : this.#turnSources.get(turn);
      const images = turn === undefined ? undefined : this.#turnImages.get(turn);
      if (turn !== undefined) {
        this.#turns.delete(turn);
        this.#turnSources.delete(turn);
        this.#turnImages.delete(turn);
      }
      if (text !== undefined) {
        this.#newestTurn = this.#messages.length;
        this.#messages.push({
          message: {
            role: "user",
            content: images ? [{ type: "text", text }, ...images] : text,
          },
          seq: event.seq,
          turn: true,
          ...(sources ? { sources } : {}),
        });
      }
    } else if (event.type === "handoff.seeded") {
      this.#seed(event.data as EventData<"handoff.seeded">);
      this.#pages.settle(this.#messages, event.seq, this.#wholes);
    } else if (event.type === "loop.decided") {
      const data = event.data as EventData<"loop.decided">;
      if (data.decision !== "continue") return;
      const index = Number(data.step.slice(this.#stepPrefix.length));
      const record = this.#steps.get(index);
      const wholes = record ? wholeResults(record) : new Map<string, string>();
      for (const { message, pages } of resultMessages(record)) {
        const entry: HistoryMessage = {
          message,
          seq: event.seq,
          turn: false,
          ...(pages ? { pages } : {}),
        };
        const kept = new Map<string, string>();
        if (message.role === "tool") {
          for (const result of message.results) {
            const whole = wholes.get(result.toolCallId);
            if (whole !== undefined && whole !== result.output) kept.set(result.toolCallId, whole);
          }
        } else {
          const whole = wholes.get("");
          if (whole !== undefined && whole !== message.content) kept.set("", whole);
        }
        if (kept.size > 0) this.#wholes.set(entry, kept);
        this.#pages.add(this.#messages.length, entry);
        this.#messages.push(entry);
      }
      this.#steps.delete(index);
      this.#pages.settle(this.#messages, event.seq, this.#wholes);
    } else if (event.type === "memory.recalled") {
      const data = event.data as EventData<"memory.recalled">;
      this.#memories = [
        ...this.#memories,
        ...data.hits.map((hit) => ({
          id: hit.id,
          continuity: hit.continuity,
          kind: hit.kind,
          ts: hit.ts,
          text: hit.text,
        })),
      ];
    } else if (event.type === "context.input-cut") {
      this.#cut(event.data as EventData<"context.input-cut">, event.seq);
    } else if (event.type === "provider.cursor-rotated") {
      this.#cursor = null;
    }
  }

  /** Replaces the message a `context.input-cut` names by its cut form (`cutInputText`). */
  #cut(data: EventData<"context.input-cut">, seq: number): void {
    const cut = {
      chars: data.chars,
      keptChars: data.kept_chars,
      tokens: data.tokens,
      limit: data.limit,
      hash: data.artifact.hash,
    };
    const index = this.#messages.findIndex(
      (entry) =>
        entry.seq === data.seq &&
        entry.thread === undefined &&
        entry.message.role === data.role &&
        (data.role !== "tool" ||
          (entry.message.role === "tool" &&
            entry.message.results.some((result) => result.toolCallId === data.tool_call_id))),
    );
    const entry = this.#messages[index];
    if (!entry) return;
    const { message } = entry;
    let next: ProviderMessage;
    let before: string;
    if (message.role === "tool") {
      before =
        message.results.find((result) => result.toolCallId === data.tool_call_id)?.output ?? "";
      next = {
        role: "tool",
        results: message.results.map((result) =>
          result.toolCallId === data.tool_call_id
            ? { ...result, output: cutInputText(result.output, cut) }
            : result,
        ),
      };
    } else if (message.role === "user" && userText(message.content) !== undefined) {
      before = userText(message.content)!;
      const text = cutInputText(before, cut);
      next = {
        role: "user",
        content:
          typeof message.content === "string"
            ? text
            : [{ type: "text", text }, ...message.content.slice(1)],
      };
    } else {
      return;
    }
    const replaced: HistoryMessage = { ...entry, message: next, revised: seq };
    // The text before its first cut stays the input's whole: a later, tighter cut stores it, not
    // a cut of a cut.
    const wholes = new Map(this.#wholes.get(entry));
    const key = data.tool_call_id ?? "";
    if (!wholes.has(key)) wholes.set(key, before);
    this.#wholes.set(replaced, wholes);
    this.#messages[index] = replaced;
  }

  #seed(data: EventData<"handoff.seeded">): void {
    for (const summary of data.summaries) this.#summaries.push(summaryFromData(summary));
    if (data.sources) this.#streams = data.sources.map(positionFromData);
    for (const carried of data.trailing) {
      const entry = seedToMessage(carried, data.from);
      if (entry.turn) this.#newestTurn = this.#messages.length;
      this.#pages.add(this.#messages.length, entry);
      this.#messages.push(entry);
    }
    if (data.resume) {
      const last = data.trailing.at(-1)?.seq ?? 0;
      this.#messages.push({
        message: { role: "user", content: CONTINUE_TEXT },
        seq: last,
        turn: false,
        thread: data.from,
      });
    }
  }

  #applyStep(record: StepRecord, event: SpoolEvent): void {
    switch (event.type) {
      case "variable.set": {
        const data = event.data as EventData<"variable.set">;
        this.#variables.set(data.name, data.value);
        return;
      }
      case "variable.deleted":
        this.#variables.delete((event.data as EventData<"variable.deleted">).name);
        return;
      case "message.completed": {
        const data = event.data as EventData<"message.completed">;
        this.#cursor =
          data.format === "openai-responses" && data.response_id
            ? {
                responseId: data.response_id,
                provider: data.provider,
                step: event.stream.id,
                seq: event.seq,
              }
            : null;
        const message = fromMessageData(data);
        record.content = message.content;
        for (const call of clientToolCalls(message)) record.native.add(call.id);
        const content = message.content.filter((block) => block.type !== "provider");
        if (content.length > 0) {
          this.#messages.push({
            message: { role: "assistant", content: simplify(content) },
            seq: event.seq,
            turn: false,
          });
        }
        return;
      }
      case "step.interrupted":
        record.interrupted = true;
        return;
      case "protocol.error":
        record.protocolErrors.push((event.data as EventData<"protocol.error">).message);
        return;
      case "action.dispatched": {
        const data = event.data as EventData<"action.dispatched">;
        record.actions.set(data.action_id, {
          id: data.action_id,
          type: data.type,
          name: data.name,
          status: "pending",
        });
        return;
      }
      default:
        if (event.type.startsWith("action.")) applyOutcome(record, event);
    }
  }

  #step(index: number): StepRecord {
    let record = this.#steps.get(index);
    if (!record) {
      record = { native: new Set(), actions: new Map(), protocolErrors: [], interrupted: false };
      this.#steps.set(index, record);
    }
    return record;
  }
}

/** A message of text blocks only is sent as a string (smaller, and every adapter takes it). */
function simplify(content: ContentBlock[]): string | ContentBlock[] {
  return content.every((block) => block.type === "text")
    ? content.map((block) => (block as { text: string }).text).join("")
    : content;
}

/** The image attachments of a turn as image parts naming their artifacts (read before the call). */
function turnImages(attachments: EventData<"turn.added">["attachments"]): ImagePart[] {
  return (attachments ?? [])
    .filter((attachment) => attachment.media_type.startsWith("image/"))
    .map((attachment) => ({
      type: "image",
      mediaType: attachment.media_type,
      data: "",
      artifact: attachment.hash,
    }));
}
