/**
 * Spool's browser for the benchmark, called as an agent's actions call it: the `browser` relic
 * under a relic host over a SQLite store (default durability, as a runtime opens it), its tools'
 * parameters parsed by their schemas. The same wiring as the tests' browser harness
 * (test/support/browser-harness.ts), which cannot be imported here: its store helper needs vitest.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { browserTools, createBrowserRelic, parseBrowserOptions } from "../../src/browser/index.js";
import { openEventStore } from "../../src/log/index.js";
import { createRelicHost } from "../../src/relics/index.js";

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
  const tools = new Map(
    browserTools((method, parameters, options) =>
      host.call("browser", method, parameters, options),
    ).map((tool) => [tool.name, tool]),
  );
  let n = 0;
  return {
    async call(method, parameters = {}) {
      const tool = tools.get(`browser.${method}`);
      if (!tool) throw new Error(`no tool browser.${method}`);
      n += 1;
      return (await tool.execute(tool.parameters.parse(parameters), {
        actionId: `a${n}`,
        attempt: 1,
        signal: new AbortController().signal,
        progress: () => {},
      })) as Record<string, unknown>;
    },
    async close() {
      await host.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
