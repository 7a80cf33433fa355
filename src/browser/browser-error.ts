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
