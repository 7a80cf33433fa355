import type { ModelWindow } from "../providers/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";

/**
 * The windows the log recorded (`model.described`), served per model in the order logged: each
 * runtime of the original run (a restart makes a new one) described a model once, and the
 * replayed runtimes describe them in the same order. Past the last one recorded for a model, the
 * last one stands. What the environment, config.yaml or a server say now decides nothing.
 */
export function recordedWindows(
  events: readonly SpoolEvent[],
): (model: string) => ModelWindow | undefined {
  const byModel = new Map<string, ModelWindow[]>();
  for (const event of events) {
    if (event.type !== "model.described") continue;
    const data = event.data as EventData<"model.described">;
    const list = byModel.get(data.model) ?? [];
    list.push({
      model: data.model,
      contextWindow: data.context_window,
      maxOutputTokens: data.max_output_tokens,
      source: data.source,
      detail: data.detail,
    });
    byModel.set(data.model, list);
  }
  const served = new Map<string, number>();
  return (model) => {
    const list = byModel.get(model);
    if (!list) return undefined;
    const index = served.get(model) ?? 0;
    served.set(model, index + 1);
    return list[Math.min(index, list.length - 1)];
  };
}
