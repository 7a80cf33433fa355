import type { RunNotice, ThreadRunResult, TurnInput } from "../runtime/index.js";
import { parseStepStreamId } from "../transcript/index.js";
import type { AcceptedTurn, AgentHost } from "./agent-host.js";
import { ServerError } from "./server-error.js";

/**
 * What one turn's run shows as it happens, in order: steps, text and reasoning blocks with their
 * deltas, actions with their input and their result or error, and one `end` last. Made from the
 * runtime's live notices of the threads that run the turn (its foreground thread and the
 * continuations it is handed off to); child threads and other turns' runs are left out.
 */
export type TurnPart =
  | { type: "step-start"; step: string }
  | { type: "step-end"; step: string }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "action"; id: string; name: string; input: unknown }
  | { type: "action-result"; id: string; output: unknown }
  | { type: "action-error"; id: string; message: string }
  | {
      type: "end";
      status: ThreadRunResult["status"] | "interrupted";
      result?: string;
      error?: { code: string; message: string };
    };

/**
 * Submits `input` on `continuity` and calls `onPart` with its run's parts as they happen, `end`
 * last (once the run has ended; a run that rejects ends `failed`). Rejects, appending nothing,
 * when the turn is refused, and with 409 `continuity.elsewhere` when another process runs the
 * continuity (its run's output is not seen here live; follow its events instead).
 */
export async function followTurn(
  host: AgentHost,
  continuity: string,
  input: TurnInput,
  onPart: (part: TurnPart) => void,
): Promise<AcceptedTurn> {
  if (await host.elsewhere(continuity)) {
    throw new ServerError(
      409,
      "continuity.elsewhere",
      `another process runs continuity "${continuity}", so its answer does not stream from here`,
      { hint: "Post the turn to /api/continuities/:id/turns and follow /events/live" },
    );
  }
  const early: RunNotice[] = [];
  let translate: ((notice: RunNotice) => void) | undefined;
  const stop = await host.listen(continuity, (notice) => {
    if (translate) translate(notice);
    else early.push(notice);
  });
  let accepted: AcceptedTurn;
  try {
    accepted = await host.submit(continuity, input);
  } catch (error) {
    stop();
    throw error;
  }
  translate = noticeTranslator(accepted.event.id, onPart);
  for (const notice of early.splice(0)) translate(notice);
  const end = (part: Extract<TurnPart, { type: "end" }>) => {
    stop();
    onPart(part);
  };
  if (accepted.run === undefined) {
    end({
      type: "end",
      status: "failed",
      error: { code: "continuity.elsewhere", message: "another process took the turn" },
    });
  } else {
    accepted.run.then(
      (result) =>
        end({
          type: "end",
          status: result.status,
          ...(result.result !== undefined ? { result: result.result } : {}),
          ...(result.error !== undefined ? { error: result.error } : {}),
        }),
      (error: unknown) =>
        end({
          type: "end",
          status: "failed",
          error: {
            code: "run.failed",
            message: error instanceof Error ? error.message : "the run failed",
          },
        }),
    );
  }
  return accepted;
}

/** Turns the notices of the threads that run `turn` into parts. */
function noticeTranslator(turn: string, onPart: (part: TurnPart) => void) {
  const threads = new Set<string>();
  const announced = new Set<string>();
  const ours = (step: string) => threads.has(parseStepStreamId(step).thread);
  return (notice: RunNotice) => {
    if (notice.type === "run-started") {
      if (notice.turn === turn) threads.add(notice.thread);
    } else if (notice.type === "handoff") {
      if (threads.has(notice.from)) threads.add(notice.to);
    } else if (notice.type === "step-started") {
      if (ours(notice.step)) onPart({ type: "step-start", step: notice.step });
    } else if (notice.type === "step-completed") {
      if (ours(notice.step)) onPart({ type: "step-end", step: notice.step });
    } else if (notice.type === "output" && ours(notice.step)) {
      outputPart(notice.step, notice.event, announced, onPart);
    }
  };
}

type OutputEvent = Extract<RunNotice, { type: "output" }>["event"];

function outputPart(
  step: string,
  event: OutputEvent,
  announced: Set<string>,
  onPart: (part: TurnPart) => void,
): void {
  if (event.type === "block-start" || event.type === "block-delta" || event.type === "block-end") {
    const kind =
      event.kind === "thought" ? "reasoning" : event.kind === "feed" ? undefined : "text";
    if (kind === undefined) return;
    const id = `${step}:${event.block}`;
    if (event.type === "block-delta") onPart({ type: `${kind}-delta`, id, delta: event.text });
    else onPart({ type: `${kind}-${event.type === "block-start" ? "start" : "end"}`, id });
  } else if (event.type === "action") {
    const id = `${step}/${event.action.id}`;
    announced.add(id);
    onPart({ type: "action", id, name: event.action.name, input: event.action.parameters });
  } else if (event.type === "action-event") {
    const data = event.entry.data as {
      action_id?: string;
      output?: unknown;
      error?: { message: string };
    };
    const id = `${step}/${data.action_id ?? ""}`;
    if (!announced.has(id)) return;
    if (event.entry.type === "action.succeeded") {
      announced.delete(id);
      onPart({ type: "action-result", id, output: data.output ?? null });
    } else if (
      event.entry.type === "action.failed" ||
      event.entry.type === "action.timed-out" ||
      event.entry.type === "action.cancelled" ||
      event.entry.type === "action.skipped"
    ) {
      announced.delete(id);
      onPart({ type: "action-error", id, message: data.error?.message ?? event.entry.type });
    }
  }
}
