/**
 * Waits `ms` milliseconds unless `signal` aborts first. Resolves `true` when the time passed,
 * `false` when the signal aborted (at once if it already had); never rejects, and leaves no
 * timer or listener behind either way.
 */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
