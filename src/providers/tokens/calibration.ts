/**
 * Self-calibration of token estimates from what providers report.
 *
 * The provider's reported usage is the truth; an estimate exists only to decide, before a call,
 * whether the context fits. Each model keeps a correction factor that multiplies its raw estimate.
 * After a call, the runtime observes the estimate it made before the call (the number the
 * estimator returned, correction included) and the `inputTokens` the provider reported in
 * `message.completed`. The factor moves toward the one that would have been exact, as an
 * exponentially weighted average in log space, so over- and under-estimates weigh alike.
 *
 * The log does not carry the pre-call estimate, so calibration is not a projection over events:
 * a runtime that wants calibration to survive a restart keeps its observations (or the state,
 * which is plain JSON) and replays them with `calibrationFrom` in the order they were made.
 */

/** One model's correction. */
export interface CalibrationEntry {
  /** What raw estimates are multiplied by; 1 before any observation. */
  factor: number;
  /** How many observations shaped it. */
  observations: number;
}

/** Corrections by model key (the estimator uses catalogue ids). Plain JSON. */
export type CalibrationState = Readonly<Record<string, CalibrationEntry>>;

/** One call: the estimate made before it and the input tokens the provider reported. */
export interface CalibrationObservation {
  model: string;
  /** The estimate made before the call, with the correction current at the time. */
  estimate: number;
  /** `usage.inputTokens` as the provider reported it. */
  reported: number;
}

/** How fast and how far calibration moves. */
export interface CalibrationOptions {
  /** Weight of the newest observation, in (0, 1]. */
  alpha: number;
  /** Bounds on one observation's ratio `reported / estimate`: an absurd one counts as the bound. */
  stepBounds: readonly [number, number];
  /** Bounds on the factor itself. */
  factorBounds: readonly [number, number];
}

/**
 * Defaults: each observation weighs 25% (within 5% of a steady ratio after six); one
 * observation's ratio counts at most 2× or at least 0.5×, so it moves the factor by at most
 * 2^0.25 ≈ 19%; the factor stays within [0.25, 4].
 */
export const DEFAULT_CALIBRATION: CalibrationOptions = Object.freeze({
  alpha: 0.25,
  stepBounds: [0.5, 2] as const,
  factorBounds: [0.25, 4] as const,
});

/** The correction factor of `model`: 1 when it has none. */
export function correctionFactor(state: CalibrationState, model: string): number {
  return state[model]?.factor ?? 1;
}

/**
 * `state` with `observation` applied; `state` itself is not changed. An observation whose numbers
 * are not positive and finite changes nothing.
 */
export function applyObservation(
  state: CalibrationState,
  observation: CalibrationObservation,
  options: CalibrationOptions = DEFAULT_CALIBRATION,
): CalibrationState {
  const { estimate, reported, model } = observation;
  if (!(estimate > 0 && reported > 0 && Number.isFinite(estimate) && Number.isFinite(reported))) {
    return state;
  }
  const previous = state[model] ?? { factor: 1, observations: 0 };
  const [stepMin, stepMax] = options.stepBounds;
  const [factorMin, factorMax] = options.factorBounds;
  const ratio = clamp(reported / estimate, stepMin, stepMax);
  const factor = clamp(previous.factor * ratio ** options.alpha, factorMin, factorMax);
  return { ...state, [model]: { factor, observations: previous.observations + 1 } };
}

/** The calibration that `observations`, applied in order to no calibration, produce. */
export function calibrationFrom(
  observations: Iterable<CalibrationObservation>,
  options: CalibrationOptions = DEFAULT_CALIBRATION,
): CalibrationState {
  let state: CalibrationState = {};
  for (const observation of observations) state = applyObservation(state, observation, options);
  return state;
}

/**
 * The same fold in the shape of a log projection (`{ initial, reduce }`), over observations rather
 * than events, for a runtime that stores its observations as events of its own.
 */
export const calibrationReducer = {
  initial: (): CalibrationState => ({}),
  reduce: (state: CalibrationState, observation: CalibrationObservation): CalibrationState =>
    applyObservation(state, observation),
};

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** What `calibrationProjection` folds: the estimates waiting for their step's usage, and the state. */
export interface CalibrationFold {
  /** Estimated input tokens and model by step stream id, until the step completes. */
  pending: Map<string, { model: string; estimate: number }>;
  state: CalibrationState;
}

/**
 * Calibration as a projection of the log: each model step's `step.started` carries the estimate
 * made before the call (`estimated_input_tokens`), its `step.completed` the input tokens the
 * provider reported; every such pair is one observation. Fold it over a continuity (or only its
 * recent events) to rebuild the estimator after a restart: `estimator.replay` is not needed.
 */
export function calibrationProjection(options: CalibrationOptions = DEFAULT_CALIBRATION): {
  initial: () => CalibrationFold;
  reduce(
    fold: CalibrationFold,
    event: { type: string; stream: { id: string }; data: unknown },
  ): CalibrationFold;
} {
  return {
    initial: () => ({ pending: new Map(), state: {} }),
    reduce(fold, event) {
      if (event.type !== "step.started" && event.type !== "step.completed") return fold;
      const data = event.data as {
        kind?: string;
        model?: string;
        estimated_input_tokens?: number;
        usage?: { input_tokens?: number };
      };
      if (data.kind !== "model") return fold;
      if (event.type === "step.started") {
        if (typeof data.estimated_input_tokens === "number" && data.model) {
          fold.pending.set(event.stream.id, {
            model: data.model,
            estimate: data.estimated_input_tokens,
          });
        }
        return fold;
      }
      const started = fold.pending.get(event.stream.id);
      fold.pending.delete(event.stream.id);
      const reported = data.usage?.input_tokens ?? 0;
      if (started && started.estimate > 0 && reported > 0) {
        fold.state = applyObservation(fold.state, { ...started, reported }, options);
      }
      return fold;
    },
  };
}
