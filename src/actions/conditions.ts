/**
 * Promises that resolve once a condition holds, re-checked whenever the owner says something
 * changed. For waits such as "the step has ended and every tracked action is closed".
 */
export class Conditions {
  #waiting: Array<() => boolean> = [];

  /** Resolves once `ready()` is true: now, or at a later `check()`. */
  until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.push(() => {
        if (!ready()) return false;
        resolve();
        return true;
      });
    });
  }

  /** Re-checks every pending condition; resolves those that now hold. */
  check(): void {
    if (this.#waiting.length > 0) this.#waiting = this.#waiting.filter((done) => !done());
  }
}
