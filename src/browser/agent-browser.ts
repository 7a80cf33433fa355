import type { AnyTool } from "../actions/index.js";
import type { SourceAdapter } from "../sources/index.js";
import { type BrowserOptions, parseBrowserOptions } from "./browser-options.js";
import { type BrowserRelic, createBrowserRelic } from "./browser-relic.js";
import { type BrowserCall, browserTools } from "./browser-tools.js";
import { createPageEventSource } from "./page-events.js";

/**
 * The source entry (manifest shape) of the browser's page events. Every chunk counts its lines of
 * each kind (`matches.error`, `matches.dialog`, `matches.blocked`, `matches.crashed`), which
 * `stream_chunk_received` hooks can test.
 */
export const BROWSER_SOURCE_ENTRY = {
  id: "browser",
  kind: "browser",
  target: "browser",
  mode: "state",
  batch: { max_wait_ms: 250 },
  patterns: {
    error: "\\] (console error|page error|request failed): ",
    dialog: "\\] dialog ",
    blocked: "^blocked request to ",
    crashed: "^browser crashed: |\\] the page (crashed|stopped responding|kept opening dialogs)",
  },
} as const;

/** An agent's browser: its options, relic, tools and page-event source. */
export interface AgentBrowser {
  options: BrowserOptions;
  relic: BrowserRelic;
  /** The `browser.*` tools over `call` (the relic host's `call("browser", …)`). */
  tools(call: BrowserCall): AnyTool[];
  /** The page-event source's entry for the manifest's sources; absent when `events: false`. */
  sourceEntry?: typeof BROWSER_SOURCE_ENTRY;
  /** The adapter of `browser` sources: the relic's page events. */
  adapter: SourceAdapter;
}

/**
 * The browser of an agent whose manifest has a `browser:` section, or `undefined` when it has
 * none (or `browser: false`). Throws `ConfigError` (`config.browser`, issues in
 * `details.issues`) for a bad section; starts nothing (Chromium starts on the first call).
 */
export function agentBrowser(options: {
  section: unknown;
  workspace: string;
  env: Readonly<Record<string, string | undefined>>;
}): AgentBrowser | undefined {
  const parsed = parseBrowserOptions(options.section);
  if (!parsed) return undefined;
  const relic = createBrowserRelic({
    options: parsed,
    workspace: options.workspace,
    env: options.env,
  });
  return {
    options: parsed,
    relic,
    tools: browserTools,
    ...(parsed.events ? { sourceEntry: BROWSER_SOURCE_ENTRY } : {}),
    adapter: (definition) => createPageEventSource(definition, relic.events),
  };
}
