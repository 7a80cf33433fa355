/**
 * A browser relic over a temporary store and workspace, called through its tools exactly as an
 * agent's actions call them (parameters parsed by each tool's schema), for the browser tests.
 * One harness (one Chromium) serves a whole test file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BrowserRelic,
  createBrowserRelic,
  parseBrowserOptions,
} from "../../src/browser/index.js";
import type { EventStore } from "../../src/log/index.js";
import { createRelicHost, type RelicHost } from "../../src/relics/index.js";
import { browserCalls } from "./browser-calls.js";
import { tempStore } from "./transcripts.js";

/** A running browser under test. */
export interface BrowserHarness {
  store: EventStore;
  host: RelicHost;
  relic: BrowserRelic;
  workspace: string;
  continuity: string;
  /** Runs `browser.<method>` with `parameters`; resolves with its result. */
  call(method: string, parameters?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Runs `browser.<method>` and resolves with the error it fails with (rejects if it succeeds). */
  fail(method: string, parameters?: Record<string, unknown>): Promise<Error & { code: string }>;
  /** The page-event lines produced so far and not yet taken. */
  takeEvents(): string[];
  /** Takes page events until one matches `pattern`, and resolves with it. */
  nextEvent(pattern: RegExp): Promise<string>;
  close(): Promise<void>;
}

/** Opens a harness whose `browser:` section is `section`. Chromium starts on the first call. */
export async function openBrowserHarness(
  section: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<BrowserHarness> {
  const { store, cleanup } = await tempStore("spool-browser-");
  const workspace = mkdtempSync(join(tmpdir(), "spool-browser-ws-"));
  const continuity = "browsing";
  const relic = createBrowserRelic({ options: parseBrowserOptions(section)!, workspace, env });
  const host = createRelicHost({ store, continuity, relics: [relic], maxRestarts: 10 });
  const call = browserCalls(host);
  return {
    store,
    host,
    relic,
    workspace,
    continuity,
    call,
    async fail(method, parameters) {
      try {
        await call(method, parameters);
      } catch (error) {
        return error as Error & { code: string };
      }
      throw new Error(`browser.${method} succeeded, but the test expected it to fail`);
    },
    takeEvents: () => relic.events.take(10_000),
    async nextEvent(pattern) {
      const never = new AbortController().signal;
      for (;;) {
        await relic.events.wait(never);
        const found = relic.events.take(10_000).find((line) => pattern.test(line));
        if (found) return found;
      }
    },
    async close() {
      await host.close();
      await cleanup();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** The ref of the first snapshot line matching `pattern` (e.g. /button "Pay now"/). */
export function refIn(snapshot: unknown, pattern: RegExp): string {
  const line = String(snapshot)
    .split("\n")
    .find((item) => pattern.test(item));
  const ref = line && /\[(e\d+)\]/.exec(line)?.[1];
  if (!ref) throw new Error(`no element matching ${pattern} in the snapshot:\n${String(snapshot)}`);
  return ref;
}
