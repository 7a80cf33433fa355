import { browserTools } from "../../src/browser/index.js";
import type { RelicHost } from "../../src/relics/index.js";

/** Runs `browser.<method>` with `parameters`; resolves with its result. */
export type BrowserCall = (
  method: string,
  parameters?: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

/**
 * The browser tools over `host`'s `browser` relic, called as an agent's actions call them: each
 * tool's parameters parsed by its schema, one action id per call. No vitest here: the bench uses
 * it too.
 */
export function browserCalls(host: RelicHost): BrowserCall {
  const tools = new Map(
    browserTools((method, parameters, options) =>
      host.call("browser", method, parameters, options),
    ).map((tool) => [tool.name, tool]),
  );
  let n = 0;
  return async (method, parameters = {}) => {
    const tool = tools.get(`browser.${method}`);
    if (!tool) throw new Error(`no tool browser.${method}`);
    n += 1;
    return (await tool.execute(tool.parameters.parse(parameters), {
      actionId: `a${n}`,
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => {},
    })) as Record<string, unknown>;
  };
}
