import { substituteText, type VariableSource } from "../../actions/index.js";
import { feedValueSource } from "../../feeds/index.js";
import type { EventData, SpoolEvent } from "../../spec/index.js";
import { parseStepStreamId } from "../../transcript/index.js";

/**
 * The `$variables` a view of the log substitutes into responses, as the chat did live: each
 * thread's variables from its `variable.set` and `variable.deleted` events (action outputs,
 * `set_variable`), and each step's context feed values from its `context.feeds`. The thread's
 * own variables shadow feeds, as in a run.
 */
export class ViewVariables {
  readonly #threads = new Map<string, Map<string, unknown>>();
  readonly #feeds = new Map<string, Readonly<Record<string, string>>>();

  /** Takes what `event` says of variables or feed values; ignores anything else. */
  push(event: SpoolEvent): void {
    if (event.type === "context.feeds") {
      const { values } = event.data as EventData<"context.feeds">;
      if (values) this.#feeds.set(event.stream.id, values);
      return;
    }
    if (event.type !== "variable.set" && event.type !== "variable.deleted") return;
    const thread = threadOf(event);
    if (thread === undefined) return;
    let variables = this.#threads.get(thread);
    if (!variables) {
      variables = new Map();
      this.#threads.set(thread, variables);
    }
    const data = event.data as EventData<"variable.set">;
    if (event.type === "variable.set") variables.set(data.name, data.value);
    else variables.delete(data.name);
  }

  /** `text` with every `$reference` the step `step` could resolve substituted (`substituteText`). */
  substitute(step: string, text: string): string {
    const variables = this.#threads.get(parseStepStreamId(step).thread);
    const feeds = this.#feeds.get(step);
    const fallback = feeds ? feedValueSource(feeds) : undefined;
    const source: VariableSource = {
      lookup: (name) =>
        variables?.has(name) ? { value: variables.get(name) } : fallback?.lookup(name),
    };
    return substituteText(text, source);
  }
}

function threadOf(event: SpoolEvent): string | undefined {
  if (event.stream.kind === "thread") return event.stream.id;
  if (event.stream.kind === "step") return parseStepStreamId(event.stream.id).thread;
  return undefined;
}
