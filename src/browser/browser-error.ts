import { RelicError, type RelicErrorOptions } from "../relics/index.js";

/** Every code the browser relic and its tools fail with; each message says what to do next. */
export type BrowserErrorCode =
  | "relic.browser.launch-failed"
  | "relic.browser.crashed"
  | "relic.browser.page-crashed"
  | "relic.browser.host-not-allowed"
  | "relic.browser.bad-url"
  | "relic.browser.stale-ref"
  | "relic.browser.unknown-ref"
  | "relic.browser.other-tab-ref"
  | "relic.browser.not-found"
  | "relic.browser.timeout"
  | "relic.browser.action-failed"
  | "relic.browser.secret-missing"
  | "relic.browser.unknown-tab"
  | "relic.browser.bad-path";

/**
 * A failure of the browser relic or one of its tools.
 *
 * Contract: `code` is one of `BrowserErrorCode` and stable; the message names the URL, ref, tab or
 * setting involved and says how to go on (take a fresh snapshot, switch tab, ask the operator to
 * change `browser.allow_hosts`). It never holds the value of a secret. `fatal` is set only for
 * `relic.browser.crashed`: the relic host then restarts Chromium on the next call.
 */
export class BrowserError extends RelicError {
  declare readonly code: BrowserErrorCode;

  constructor(code: BrowserErrorCode, message: string, options: RelicErrorOptions = {}) {
    super(code, message, options);
  }
}

/** True when `error` is a Playwright timeout (`TimeoutError`). */
export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

/** The first line of an error's message, without Playwright's call log: short and secret-free. */
export function briefMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").slice(0, 500);
}

/** Races `work` against `ms` milliseconds: a page stuck in a loop never hangs a call. */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new BrowserError("relic.browser.timeout", `${what} did not finish within ${ms} ms`, {
            retryable: true,
            hint: "The page may be busy (a script loop, endless dialogs) or slow; try again with a longer timeout_ms, or navigate elsewhere",
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (error) {
    if (isTimeout(error)) {
      throw new BrowserError("relic.browser.timeout", `${what} timed out`, {
        retryable: true,
        hint: "Try again with a longer timeout_ms, or check the page with browser.snapshot",
      });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}
