import {
  createSummaryWorker,
  type SummarizerChoice,
  type SummaryWorker,
  textTokens,
} from "../continuity/index.js";
import { createHookEngine } from "../hooks/index.js";
import type { ModelWindow } from "../providers/index.js";
import { createTokenEstimator } from "../providers/index.js";
import { SpoolError } from "../spec/index.js";
import type { AgentSpec } from "./agent-runtime-types.js";
import { builtinHooks } from "./builtin-hooks.js";
import { type ContinuityDriver, createContinuityDriver } from "./continuity-driver.js";
import type { ContinuitySession } from "./continuity-session.js";
import { sessionExecutors } from "./session-executors.js";
import { runSingleAction } from "./single-action.js";
import { screenshotsOf, ThreadHistory } from "./thread-history.js";

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

/** The session's summary worker; its summarizers run as background threads (`runDirective`). */
export function createSessionWorker(session: ContinuitySession): SummaryWorker {
  const { options } = session.shared;
  return createSummaryWorker({
    store: options.store,
    continuity: session.continuity,
    summarize: (call) =>
      runDirective(session, {
        id: call.id,
        thread: call.thread,
        name: call.summarizer,
        inputs: call.inputs,
        signal: call.signal,
        summary: true,
      }),
    countTokens: (text) => textTokens(session.background, options.agent.model, text),
    ...(options.summaryTimeoutMs !== undefined ? { timeoutMs: options.summaryTimeoutMs } : {}),
    // What fits the summarizer's window beside its instructions (about 3 characters a token).
    maxTranscriptChars: (name) => {
      const spec = options.agents?.get(name);
      const budget = inputBudget(session.windows.known(spec?.model ?? options.agent.model));
      const instructions = spec ? spec.instructions.length : 4000;
      return Math.max(2000, (budget - 1024) * 3 - instructions);
    },
  });
}

/**
 * The session's continuity driver (pressure, hooks, summaries, handoffs). A handoff it makes moves
 * the session's foreground onto the continuation thread; a hook's tool takes the model's action
 * path (the foreground agent's executors, `runSingleAction`).
 */
export function createSessionDriver(session: ContinuitySession): ContinuityDriver {
  const { options, catalogue, continuation, summarizerFor } = session.shared;
  const { store } = options;
  return createContinuityDriver({
    store,
    continuity: session.continuity,
    hooks: createHookEngine({ hooks: options.hooks ?? builtinHooks() }),
    continuation,
    summarizerFor,
    worker: session.worker,
    runDirective: (call) =>
      runDirective(session, {
        id: call.id,
        thread: call.thread,
        name: call.name,
        inputs: call.params,
        signal: AbortSignal.timeout(options.summaryTimeoutMs ?? 120_000),
        summary: false,
      }),
    runTool: (call) =>
      runSingleAction({
        store,
        continuity: session.continuity,
        step: call.step,
        executors: sessionExecutors(
          session,
          call.thread,
          options.agent,
          0,
          new AbortController().signal,
        ),
        action: { id: call.actionId, type: "tool", name: call.name, parameters: call.params },
      }),
    // Read when a run starts, not now: the driver is made while the log loads (it learns its
    // hook actions from it), before the session's calibrated estimator exists.
    get estimator() {
      return session.estimator ?? options.estimator ?? createTokenEstimator({ catalogue });
    },
    ...(options.signer ? { signer: options.signer } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.memory
      ? {
          recall: (thread: string, query: string) =>
            session.memory.recall({
              continuity: session.continuity,
              thread,
              trigger: "handoff",
              query,
              ...(session.actor !== undefined ? { actor: session.actor } : {}),
            }),
        }
      : {}),
    continued: (from, to, history) => session.continued(from, to, history),
  });
}

/**
 * Runs a directive as a child thread of `call.thread` (a summarizer, a hook's directive): its
 * inputs fill its `$placeholders`, and its final response is the result. A run that does not
 * complete logs `thread.failed` and rejects with its error.
 */
export async function runDirective(
  session: ContinuitySession,
  call: DirectiveRun,
): Promise<string> {
  const { options, summarizerFor } = session.shared;
  const { store } = options;
  const { continuity } = session;
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
        step: `${call.thread}:${session.state?.threads.get(call.thread)?.nextStep ?? 0}`,
        action: call.id.slice(at + 1),
        depth: 1,
      },
    },
  });
  // Its history starts at its own start: it never reads the continuity from the beginning.
  session.histories.set(
    call.id,
    new ThreadHistory(call.id, {
      after: started.seq - 1,
      ...screenshotsOf(session.shared.options),
    }),
  );
  const result = await session
    .runThread({
      thread: call.id,
      spec,
      depth: 1,
      nextStep: 0,
      input: call.summary
        ? "Write the summary now, as your instructions say."
        : JSON.stringify(call.inputs),
      signal: call.signal,
      estimator: session.background,
    })
    .finally(() => session.histories.delete(call.id));
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

/** Input tokens a request may use: the model's window minus the output it reserves. */
export function inputBudget(window: ModelWindow): number {
  const reserve = Math.min(window.maxOutputTokens, 8192);
  return Math.max(1024, window.contextWindow - reserve);
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
