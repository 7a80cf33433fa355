import { type AnyTool, defineTool } from "../actions/index.js";
import type { RelicCallOptions } from "../relics/index.js";
import { BROWSER_METHODS } from "./browser-relic.js";

/** Calls one method of the browser relic through its host (`RelicHost.call`). */
export type BrowserCall = (
  method: string,
  parameters: unknown,
  options: RelicCallOptions,
) => Promise<unknown>;

/** Methods that leave the page as it was: a crash-and-restart may run them again. */
const IDEMPOTENT = new Set(["snapshot", "screenshot", "wait_for"]);

/** The tool names, in the order `browserTools` returns them. */
export const BROWSER_TOOL_NAMES = Object.keys(BROWSER_METHODS).map((method) => `browser.${method}`);

/**
 * The browser tools (`browser.navigate`, `browser.snapshot`, …), each calling its relic method
 * through `call`, so the relic's host starts Chromium on first use and logs every call. When
 * the call finds Chromium gone (`relic.browser.crashed`), the tool calls once more, which
 * restarts it with the same profile, and says so in the result's `notice` (or, if that call
 * fails too, in the error). All are side-effecting (the runtime runs them one at a time).
 */
export function browserTools(call: BrowserCall): AnyTool[] {
  return Object.entries(BROWSER_METHODS).map(([method, spec]) =>
    defineTool({
      name: `browser.${method}`,
      description: spec.description,
      parameters: spec.parameters,
      sideEffects: true,
      idempotent: IDEMPOTENT.has(method),
      async execute(parameters, context) {
        const options = { signal: context.signal, actionId: context.actionId };
        try {
          return await call(method, parameters, options);
        } catch (error) {
          if ((error as { code?: unknown }).code !== "relic.browser.crashed") throw error;
          const notice =
            "Chromium had crashed or was killed; it was restarted with the same profile (cookies and logins kept), but open tabs and refs are gone";
          try {
            const result = await call(method, parameters, options);
            return { ...(result as Record<string, unknown>), notice };
          } catch (again) {
            if (again instanceof Error) again.message = `${notice}. ${again.message}`;
            throw again;
          }
        }
      },
    }),
  );
}
