import type { SpoolEvent } from "../../../src/spec/index.js";

/** One model step's usage, in log order. */
export interface UsagePoint {
  seq: number;
  /** Epoch milliseconds of the step's end. */
  at: number;
  step: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
}

/** One run's spend (`run.completed.cost_usd`). */
export interface SpendPoint {
  seq: number;
  at: number;
  thread: string;
  status: string;
  costUsd: number;
}

/**
 * Folds `step.completed` usage (every model step, workers' included: they cost tokens too) and
 * `run.completed` spend into series over time, with running totals. Never throws.
 */
export class UsageFold {
  readonly steps: UsagePoint[] = [];
  readonly runs: SpendPoint[] = [];
  readonly totals = { input: 0, output: 0, cacheRead: 0, costUsd: 0 };
  readonly byModel = new Map<string, { input: number; output: number; steps: number }>();

  push(event: SpoolEvent): void {
    const data = event.data as Record<string, unknown>;
    const at = Date.parse(event.ts);
    if (event.type === "step.completed" && data.kind === "model") {
      const usage = (data.usage ?? {}) as Record<string, number | undefined>;
      const point: UsagePoint = {
        seq: event.seq,
        at,
        step: event.stream.id,
        model: String(data.model ?? "?"),
        input: usage.input_tokens ?? 0,
        output: usage.output_tokens ?? 0,
        cacheRead: usage.cache_read_tokens ?? 0,
      };
      this.steps.push(point);
      this.totals.input += point.input;
      this.totals.output += point.output;
      this.totals.cacheRead += point.cacheRead;
      const model = this.byModel.get(point.model) ?? { input: 0, output: 0, steps: 0 };
      model.input += point.input;
      model.output += point.output;
      model.steps += 1;
      this.byModel.set(point.model, model);
    } else if (event.type === "run.completed" && typeof data.cost_usd === "number") {
      this.runs.push({
        seq: event.seq,
        at,
        thread: event.stream.id,
        status: String(data.status),
        costUsd: data.cost_usd,
      });
      this.totals.costUsd += data.cost_usd;
    }
  }
}
