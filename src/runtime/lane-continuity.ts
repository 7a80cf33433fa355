import type { ActionOutcome } from "../actions/index.js";
import {
  createSummaryWorker,
  type SummarizerChoice,
  type SummaryWorker,
  selectSummarizer,
  textTokens,
} from "../continuity/index.js";
import type { ContinuationConfig } from "../directives/index.js";
import { createHookEngine } from "../hooks/index.js";
import type { ModelCatalogue } from "../providers/index.js";
import { createTokenEstimator, type TokenEstimator } from "../providers/index.js";
import { SpoolError } from "../spec/index.js";
import type { AgentRuntimeOptions, AgentSpec } from "./agent-runtime.js";
import { builtinHooks } from "./builtin-hooks.js";
import { type ContinuityDriver, createContinuityDriver } from "./continuity-driver.js";
import type { HookToolCall } from "./hook-dispatch.js";
import type { Lane, RunLaneThread } from "./lane.js";
import { ThreadHistory } from "./thread-history.js";

/** What `createLaneContinuity` needs: the runtime's options, resolved, and its thread runner. */
export interface LaneContinuityOptions
  extends Pick<
    AgentRuntimeOptions,
    | "store"
    | "agent"
    | "agents"
    | "estimator"
    | "signer"
    | "sleep"
    | "random"
    | "hooks"
    | "summarizerFor"
    | "summarizerSpec"
    | "summaryTimeoutMs"
  > {
  catalogue: ModelCatalogue;
  /** `coordination.yaml`'s continuation settings, resolved. */
  continuation: ContinuationConfig;
  /** Runs a background thread (a summarizer, a hook's directive) to its end. */
  runThread: RunLaneThread;
  /** Runs a hook's tool through the runtime's one action path (`runSingleAction`). */
  runTool: (continuity: string, lane: Lane, call: HookToolCall) => Promise<ActionOutcome>;
}

/** A directive run as a background child thread of `thread`, as `runDirective` takes it. */
export interface DirectiveRun {
  /** The child thread's id: `<thread>@<action>`. */
  id: string;
  thread: string;
  name: string;
  inputs: Record<string, unknown>;
  signal: AbortSignal;
  /** A summarizer (its spec from `summarizerSpec`, its limits from its summarizer choice). */
  summary: boolean;
}

/**
 * The continuity machinery of the runtime's lanes, each part made once per lane on first use
 * and kept on it.
 */
export interface LaneContinuity {
  /** The estimator of the lane's background threads (summarizers, hooks' directives). */
  backgroundOf(lane: Lane): TokenEstimator;
  /** The lane's summary worker; its summarizers run as background threads (`runDirective`). */
  workerOf(continuity: string, lane: Lane): SummaryWorker;
  /**
   * The lane's continuity driver (pressure, hooks, summaries, handoffs); a handoff it makes
   * moves the lane's foreground onto the continuation thread.
   */
  driverOf(continuity: string, lane: Lane): ContinuityDriver;
  /**
   * Runs a directive as a child thread of `call.thread` (a summarizer, a hook's directive): its
   * inputs fill its `$placeholders`, and its final response is the result. A run that does not
   * complete logs `thread.failed` and rejects with its error.
   */
  runDirective(continuity: string, lane: Lane, call: DirectiveRun): Promise<string>;
}

/** Creates the continuity machinery of the runtime's lanes (see `LaneContinuity`). */
export function createLaneContinuity(options: LaneContinuityOptions): LaneContinuity {
  const { store, catalogue, continuation, runThread } = options;
  const hookEngine = () => createHookEngine({ hooks: options.hooks ?? builtinHooks() });
  const summarizerFor =
    options.summarizerFor ??
    ((directive: string) =>
      selectSummarizer({
        directive: { name: directive },
        continuation,
        exists: (name) => options.agents?.get(name) !== undefined,
      }));

  const backgroundOf = (current: Lane): TokenEstimator => {
    current.background ??= createTokenEstimator({ catalogue });
    return current.background;
  };

  const workerOf = (continuity: string, current: Lane): SummaryWorker => {
    current.worker ??= createSummaryWorker({
      store,
      continuity,
      summarize: (call) =>
        runDirective(continuity, current, {
          id: call.id,
          thread: call.thread,
          name: call.summarizer,
          inputs: call.inputs,
          signal: call.signal,
          summary: true,
        }),
      countTokens: (text) => textTokens(backgroundOf(current), options.agent.model, text),
      ...(options.summaryTimeoutMs !== undefined ? { timeoutMs: options.summaryTimeoutMs } : {}),
      // What fits the summarizer's window beside its instructions (about 3 characters a token).
      maxTranscriptChars: (name) => {
        const spec = options.agents?.get(name);
        const budget = inputBudget(catalogue, spec?.model ?? options.agent.model);
        const instructions = spec ? spec.instructions.length : 4000;
        return Math.max(2000, (budget - 1024) * 3 - instructions);
      },
    });
    return current.worker;
  };

  const driverOf = (continuity: string, current: Lane): ContinuityDriver => {
    current.driver ??= createContinuityDriver({
      store,
      continuity,
      hooks: hookEngine(),
      continuation,
      summarizerFor,
      worker: workerOf(continuity, current),
      runDirective: (call) =>
        runDirective(continuity, current, {
          id: call.id,
          thread: call.thread,
          name: call.name,
          inputs: call.params,
          signal: AbortSignal.timeout(options.summaryTimeoutMs ?? 120_000),
          summary: false,
        }),
      runTool: (call) => options.runTool(continuity, current, call),
      // Read when a run starts, not now: the driver is made while the log loads (it learns its
      // hook actions from it), before the lane's calibrated estimator exists.
      get estimator() {
        return current.estimator ?? options.estimator ?? createTokenEstimator({ catalogue });
      },
      ...(options.signer ? { signer: options.signer } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.random ? { random: options.random } : {}),
      continued: (from, to, history) => {
        const state = current.state;
        current.histories.set(to, history);
        current.histories.delete(from);
        if (!state) return;
        const old = state.threads.get(from);
        if (old) old.ended = "thread.continued";
        state.threads.set(to, {
          id: to,
          directive: old?.directive ?? options.agent.directive,
          startSeq: history.lastSeq + 1,
          readFrom: history.lastSeq + 1,
          nextStep: 0,
        });
        state.foreground = to;
      },
    });
    return current.driver;
  };

  const runDirective = async (
    continuity: string,
    current: Lane,
    call: DirectiveRun,
  ): Promise<string> => {
    const found =
      call.summary && options.summarizerSpec
        ? options.summarizerSpec(call.name)
        : options.agents?.get(call.name);
    if (!found) {
      throw new SpoolError("directive.unknown", `there is no directive "${call.name}" to run`, {
        hint: "Create it in .ai/directives/, or name an existing one in coordination.yaml or the hook",
      });
    }
    const choice = call.summary ? summarizerFor(found.directive) : undefined;
    const spec: AgentSpec = {
      ...found,
      instructions: fillInputs(found.instructions, call.inputs),
      limits: choice?.limits ? summarizerLimits(found.limits, choice.limits) : found.limits,
      nativeTools: false,
    };
    const at = call.id.lastIndexOf("@");
    const started = await store.append({
      continuity,
      stream: { kind: "thread", id: call.id },
      type: "thread.started",
      data: {
        directive: spec.directive,
        chain_root: call.id,
        model: spec.model,
        parent: {
          thread: call.thread,
          step: `${call.thread}:${current.state?.threads.get(call.thread)?.nextStep ?? 0}`,
          action: call.id.slice(at + 1),
          depth: 1,
        },
      },
    });
    // Its history starts at its own start: it never reads the continuity from the beginning.
    current.histories.set(call.id, new ThreadHistory(call.id, { after: started.seq - 1 }));
    const result = await runThread(continuity, current, {
      thread: call.id,
      spec,
      depth: 1,
      nextStep: 0,
      input: call.summary
        ? "Write the summary now, as your instructions say."
        : JSON.stringify(call.inputs),
      signal: call.signal,
      estimator: backgroundOf(current),
    }).finally(() => current.histories.delete(call.id));
    const stream = { kind: "thread" as const, id: call.id };
    if (result.status === "completed") {
      await store.append({
        continuity,
        stream,
        type: "thread.completed",
        data: result.result !== undefined ? { result: result.result } : {},
      });
      return result.result ?? "";
    }
    const error = result.error ?? {
      code: `directive.${result.status}`,
      message: `the directive "${spec.directive}" ended ${result.status}`,
    };
    await store.append({ continuity, stream, type: "thread.failed", data: error });
    throw new SpoolError(error.code, error.message);
  };

  return { backgroundOf, workerOf, driverOf, runDirective };
}

/** A directive's limits with those its summarizer choice sets in their place. */
function summarizerLimits(
  limits: AgentSpec["limits"],
  chosen: NonNullable<SummarizerChoice["limits"]>,
): AgentSpec["limits"] {
  return {
    ...limits,
    ...(chosen.maxTurns !== undefined ? { maxTurns: chosen.maxTurns } : {}),
    ...(chosen.maxTokens !== undefined ? { maxTokens: chosen.maxTokens } : {}),
    ...(chosen.maxSpendUsd !== undefined ? { maxSpendUsd: chosen.maxSpendUsd } : {}),
    ...(chosen.maxWallSeconds !== undefined ? { maxWallMs: chosen.maxWallSeconds * 1000 } : {}),
  };
}

/** Input tokens a request of `model` may use: its window minus the output it reserves. */
export function inputBudget(catalogue: ModelCatalogue, model: string): number {
  const info = catalogue.lookup(model);
  const reserve = Math.min(info?.maxOutputTokens ?? 4096, 8192);
  return Math.max(1024, (info?.contextWindow ?? 128_000) - reserve);
}

/**
 * A directive's instructions with its inputs: each `$name` of a given input is replaced by its
 * value; inputs the text does not mention are listed after it.
 */
export function fillInputs(instructions: string, inputs: Record<string, unknown>): string {
  const unused: string[] = [];
  let text = instructions;
  for (const [name, value] of Object.entries(inputs)) {
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    const pattern = new RegExp(`\\$${name.replace(/[^A-Za-z0-9_]/g, "")}(?![A-Za-z0-9_])`, "g");
    if (pattern.test(text)) text = text.replace(pattern, () => shown);
    else unused.push(`- ${name}: ${shown}`);
  }
  return unused.length === 0 ? text : `${text.trim()}\n\n# Inputs\n${unused.join("\n")}`;
}
