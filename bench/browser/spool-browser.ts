/**
 * Spool's browser for the benchmark, called as an agent's actions call it: the `browser` relic
 * under a relic host over a SQLite store (default durability, as a runtime opens it), its tools'
 * parameters parsed by their schemas (`browserCalls`, which the tests' browser harness uses too).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBrowserRelic, parseBrowserOptions } from "../../src/browser/index.js";
import { openEventStore } from "../../src/log/index.js";
import { createRelicHost } from "../../src/relics/index.js";
import { browserCalls } from "../../test/support/browser-calls.js";

/** A running Spool browser. */
export interface SpoolBrowser {
  /** Runs `browser.<method>` with `parameters`; resolves with its result. */
  call(method: string, parameters?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Opens a browser whose manifest section is `section`; Chromium starts on the first call. */
export async function openSpoolBrowser(section: Record<string, unknown>): Promise<SpoolBrowser> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-browser-"));
  const workspace = join(dir, "workspace");
  const store = await openEventStore({ db: join(dir, "store"), env: {} });
  const relic = createBrowserRelic({ options: parseBrowserOptions(section)!, workspace, env: {} });
  const host = createRelicHost({ store, continuity: "bench", relics: [relic] });
  const call = browserCalls(host);
  return {
    call,
    async close() {
      await host.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
