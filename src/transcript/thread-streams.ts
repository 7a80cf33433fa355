import type { SpoolEvent, StreamRef } from "../spec/index.js";

/** The stream id of step `index` (0, 1, 2…) of thread `thread`: `${thread}:${index}`. */
export function stepStreamId(thread: string, index: number): string {
  return `${thread}:${index}`;
}

/**
 * The thread and index of a step stream id: the inverse of `stepStreamId`. `index` is `NaN` when
 * the id does not end in `:<index>`.
 */
export function parseStepStreamId(id: string): { thread: string; index: number } {
  const cut = id.lastIndexOf(":");
  if (cut === -1) return { thread: id, index: Number.NaN };
  return { thread: id.slice(0, cut), index: Number(id.slice(cut + 1)) };
}

/**
 * The known step a task stream id belongs to (the shortest prefix `${step}:` of it whose step is
 * in `knownSteps`), or `undefined`. Checks one prefix per `:` in the id, so it costs the same
 * however many steps are known.
 */
export function taskStepId(
  taskId: string,
  knownSteps: { has(step: string): boolean },
): string | undefined {
  for (let at = taskId.indexOf(":"); at > 0; at = taskId.indexOf(":", at + 1)) {
    const prefix = taskId.slice(0, at);
    if (knownSteps.has(prefix)) return prefix;
  }
  return undefined;
}

/**
 * True when `stream` belongs to thread `thread`: the thread's own stream, one of its steps
 * (`knownSteps`: the step streams whose `step.started` named the thread), or a task of one of them.
 */
export function isThreadStream(
  thread: string,
  stream: StreamRef,
  knownSteps: ReadonlySet<string>,
): boolean {
  switch (stream.kind) {
    case "thread":
      return stream.id === thread;
    case "step":
      return knownSteps.has(stream.id);
    case "task":
      return taskStepId(stream.id, knownSteps) !== undefined;
    default:
      return false;
  }
}

/**
 * Which events of a continuity belong to one thread, decided in seq order: the thread stream, the
 * step streams whose first `step.started` (`kind: "model"`) names the thread (from that event
 * on), the task streams of those steps, and `checkpoint.signed` events on the continuity stream
 * whose `data.thread` is the thread. Pure: the same events in the same order give the same answers,
 * which is what keeps a live transcript and a rebuilt one identical.
 */
export class ThreadMembership {
  /** The thread whose events are picked. */
  readonly thread: string;
  readonly #steps: Set<string>;

  /** `steps`: step stream ids already known to belong to the thread (when resuming). */
  constructor(thread: string, steps: Iterable<string> = []) {
    this.thread = thread;
    this.#steps = new Set(steps);
  }

  /** The step stream ids known so far. */
  get steps(): ReadonlySet<string> {
    return this.#steps;
  }

  /** Folds `event` (events must come in seq order) and says whether it belongs to the thread. */
  accept(event: Pick<SpoolEvent, "type" | "stream" | "data">): boolean {
    const stream = event.stream;
    if (event.type === "step.started" && stream.kind === "step") {
      const data = event.data as { kind?: unknown; thread?: unknown };
      if (data.kind === "model" && data.thread === this.thread) this.#steps.add(stream.id);
    }
    if (isThreadStream(this.thread, stream, this.#steps)) return true;
    return (
      event.type === "checkpoint.signed" &&
      stream.kind === "continuity" &&
      (event.data as { thread?: unknown }).thread === this.thread
    );
  }
}
