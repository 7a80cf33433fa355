import { evaluateCondition } from "./hook-condition.js";
import {
  compareHookOrder,
  type HookDefinition,
  type HookEntry,
  type HookEventName,
  type HookItemType,
  type HookLayer,
  type HookRateLimit,
} from "./hook-definition.js";
import type { HookPayloads } from "./hook-payloads.js";
import { renderTemplates, renderText } from "./hook-template.js";

/** Options of `createHookEngine`. */
export interface HookEngineOptions {
  /** The hooks in force (`loadHooks(...).hooks`); disabled entries are ignored. */
  hooks: readonly HookEntry[];
  /**
   * Events whose hooks fire only when their condition turns from false to true within a scope.
   * Default `["context_window_pressure"]`.
   */
  edgeTriggered?: readonly HookEventName[];
}

/** A hook that fired: what to run, with its params rendered against the event. */
export interface HookFiring {
  /** The hook's id. */
  hook: string;
  layer: HookLayer;
  event: HookEventName;
  /** `item_id` rendered (a template in it included); the runtime refuses an empty one. */
  action: { item_type: HookItemType; item_id: string };
  /** The hook's `params` with every template rendered (JSON). */
  params: unknown;
}

/** Evaluates hooks against events. */
export interface HookEngine {
  /** The enabled hooks, in evaluation order. */
  readonly hooks: readonly HookDefinition[];
  /**
   * The hooks of `event` whose condition holds for `payload`, in evaluation order (layer 1,
   * then layer 2, each by id). For an edge-triggered event a hook fires only on the evaluation
   * where its condition turns true within `scope` (the thread id): it does not fire again while
   * it stays true, and may fire again after it has been false. A hook with a `rateLimit` is
   * held back (left out, and not counted) while its limit says so, measured on `at`, the logged
   * time (ms since the epoch) of the event that triggered this evaluation; without `at` its limit
   * is not applied. Deterministic: the same sequence of calls gives the same firings. Never throws.
   */
  evaluate<E extends HookEventName>(
    event: E,
    payload: HookPayloads[E],
    scope: string,
    at?: number,
  ): HookFiring[];
  /**
   * Counts a firing of `hook` at `at` against its rate limit, as if `evaluate` had given it: how
   * a restarted runtime learns the firings its log holds. Nothing for a hook with no limit.
   */
  remember(hook: string, at: number): void;
  /** Forgets every firing counted against rate limits (before the log is read again). */
  resetRates(): void;
  /** Forgets `scope`'s edge state (a continuation thread starts fresh). */
  reset(scope: string): void;
}

/** The longest window a rate limit looks back over: an hour. */
const HOUR_MS = 3_600_000;

/**
 * Builds a hook engine over `hooks`. The only state is, per scope, which edge-triggered hooks'
 * conditions held at their last evaluation; it lives until `reset(scope)`.
 */
export function createHookEngine(options: HookEngineOptions): HookEngine {
  const hooks = options.hooks
    .filter((entry): entry is HookDefinition => entry.enabled)
    .sort(compareHookOrder);
  const edgeTriggered = new Set<HookEventName>(
    options.edgeTriggered ?? ["context_window_pressure"],
  );
  const byEvent = new Map<HookEventName, HookDefinition[]>();
  for (const hook of hooks) {
    const list = byEvent.get(hook.event) ?? [];
    list.push(hook);
    byEvent.set(hook.event, list);
  }
  const holding = new Map<string, Set<HookDefinition>>();
  /** The times (ascending, within the last hour) each rate-limited hook fired at. */
  const fired = new Map<string, number[]>();
  const limited = new Map(
    hooks.flatMap((hook) => (hook.rateLimit ? [[hook.id, hook.rateLimit] as const] : [])),
  );
  const remember = (hook: string, at: number) => {
    if (!limited.has(hook)) return;
    const times = (fired.get(hook) ?? []).filter((time) => time > at - HOUR_MS);
    times.push(at);
    times.sort((a, b) => a - b);
    fired.set(hook, times);
  };

  return {
    hooks,
    evaluate(event, payload, scope, at) {
      const edge = edgeTriggered.has(event);
      const firings: HookFiring[] = [];
      for (const hook of byEvent.get(event) ?? []) {
        const holds = hook.condition ? evaluateCondition(hook.condition, payload) : true;
        if (edge) {
          let held = holding.get(scope);
          const was = held?.has(hook) ?? false;
          if (holds && !was) {
            if (!held) {
              held = new Set();
              holding.set(scope, held);
            }
            held.add(hook);
          } else if (!holds && was && held) {
            held.delete(hook);
            if (held.size === 0) holding.delete(scope);
          }
          if (!holds || was) continue;
        } else if (!holds) {
          continue;
        }
        if (hook.rateLimit && at !== undefined) {
          if (heldBack(hook.rateLimit, fired.get(hook.id) ?? [], at)) continue;
          remember(hook.id, at);
        }
        firings.push({
          hook: hook.id,
          layer: hook.layer,
          event,
          action: {
            item_type: hook.action.item_type,
            item_id: renderText(hook.action.item_id, payload),
          },
          params: renderTemplates(hook.action.params, payload),
        });
      }
      return firings;
    },
    remember,
    resetRates() {
      fired.clear();
    },
    reset(scope) {
      holding.delete(scope);
    },
  };
}

/** Whether `limit` holds a firing at `at` back, given the earlier firings' times. */
function heldBack(limit: HookRateLimit, times: readonly number[], at: number): boolean {
  const last = times.at(-1);
  if (limit.minIntervalMs !== undefined && last !== undefined && at - last < limit.minIntervalMs) {
    return true;
  }
  if (limit.maxPerHour === undefined) return false;
  return times.filter((time) => time > at - HOUR_MS && time <= at).length >= limit.maxPerHour;
}
