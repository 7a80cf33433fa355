/** One-shot timers (`setTimeout`/`clearTimeout`) that fire only when a test says so. */
export interface ManualTimeouts {
  timers: {
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
  };
  /** Resolves with the delay of the next timer set (or of one already pending). */
  armed(): Promise<number>;
  /** Runs every pending timer once. */
  fire(): void;
  /** How many timers are pending. */
  readonly count: number;
}

/** Timers that never fire on their own: `armed()` waits for one to be set, `fire()` runs them. */
export function manualTimeouts(): ManualTimeouts {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let next = 0;
  let onArm: (() => void) | undefined;
  return {
    timers: {
      setTimeout(callback, ms) {
        next += 1;
        pending.set(next, { callback, ms });
        onArm?.();
        return next;
      },
      clearTimeout(handle) {
        pending.delete(handle as number);
      },
    },
    armed: () =>
      new Promise<number>((resolve) => {
        const check = () => {
          const [first] = pending.values();
          if (first) {
            onArm = undefined;
            resolve(first.ms);
          } else onArm = check;
        };
        check();
      }),
    fire() {
      const entries = [...pending.values()];
      pending.clear();
      for (const { callback } of entries) callback();
    },
    get count() {
      return pending.size;
    },
  };
}
