import { deepFreeze, toJsonValue } from "./json-value.js";

/** Something `$name` can be looked up in: step variables, context feeds. */
export interface VariableSource {
  /** `{ value }` when `name` is defined here (the value may be `null`), else `undefined`. */
  lookup(name: string): { value: unknown } | undefined;
}

/**
 * The `$variables` of a thread: action outputs (`output_key`), `set_variable`, and, through
 * fallback sources, context feed values.
 *
 * Contract: values are stored in their JSON form (`toJsonValue`) and deep-frozen, so what an
 * executor receives through a `$name` parameter cannot change the variable behind it and a replay
 * sees the same values. Own variables shadow the fallback sources, which are asked in order.
 * Changing a variable does not log it: the scheduler and internal actions record `variable.set`
 * and `variable.deleted` events.
 */
export interface VariableStore extends VariableSource {
  /** Stores `value` (normalized) under `name`; returns the stored value. */
  set(name: string, value: unknown): unknown;
  /** Removes `name`; false when it was not set here (fallback sources are not touched). */
  delete(name: string): boolean;
  /** True when `name` is set here or in a fallback source. */
  has(name: string): boolean;
  /** The variables set here (not the fallbacks'), as a plain object. */
  snapshot(): Record<string, unknown>;
}

/** Options of `createVariableStore`. */
export interface VariableStoreOptions {
  /** Variables to start with (normalized like `set`). */
  initial?: Record<string, unknown>;
  /** Sources asked, in order, for names not set here (e.g. the context feeds' values). */
  fallbacks?: readonly VariableSource[];
}

/** A `VariableStore` in memory. */
export function createVariableStore(options: VariableStoreOptions = {}): VariableStore {
  const values = new Map<string, unknown>();
  const fallbacks = options.fallbacks ?? [];
  const store: VariableStore = {
    lookup(name) {
      if (values.has(name)) return { value: values.get(name) };
      for (const source of fallbacks) {
        const found = source.lookup(name);
        if (found) return found;
      }
      return undefined;
    },
    set(name, value) {
      const stored = deepFreeze(toJsonValue(value));
      values.set(name, stored);
      return stored;
    },
    delete: (name) => values.delete(name),
    has: (name) => store.lookup(name) !== undefined,
    snapshot: () => Object.fromEntries(values),
  };
  for (const [name, value] of Object.entries(options.initial ?? {})) store.set(name, value);
  return store;
}
