/**
 * The world of the browser agent tests: the shop apps on loopback, a temporary store, and a
 * workspace whose `shopper` agent runs the built-in `browser` directive with the shop allowed
 * (page events off). It assembles the agent over any store, replays the continuity in process
 * (with the run's catalogue), and gives the shopper's steps through the cart and shipping pages.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AssembledAgent, assembleAgent } from "../../src/app/index.js";
import type { EventStore } from "../../src/log/index.js";
import type { Provider } from "../../src/providers/index.js";
import type { ModelCatalogue } from "../../src/providers/models/index.js";
import { type ReplayReport, replayContinuity } from "../../src/replay/index.js";
import { createAgentRuntime, type ThreadRunResult } from "../../src/runtime/index.js";
import { type BrowserApps, startBrowserApps } from "./browser-apps/index.js";
import { refOf, tool } from "./browser-model.js";
import { SMALL_MODEL } from "./continuity-run.js";
import { tempStore } from "./transcripts.js";

/** The continuity the shop tests run. */
export const SHOP = "shop";

/** What `openShopWorld` gives. */
export interface ShopWorld {
  apps: BrowserApps;
  store: EventStore;
  workspace: string;
  /** The `shopper` agent over `store` with `provider`. */
  assemble(store: EventStore, provider: Provider): AssembledAgent;
  /**
   * Runs one turn of `text` from ada through the `shopper` agent on `provider` with `catalogue`,
   * to its end (background work settled, the relics stopped); resolves with the run's result.
   */
  shop(text: string, provider: Provider, catalogue: ModelCatalogue): Promise<ThreadRunResult>;
  /** Replays the shop continuity in process with `catalogue`; the shop must see no request. */
  replay(catalogue: ModelCatalogue): Promise<ReplayReport>;
  /** Every request the shop has had. */
  hits(): number;
  close(): Promise<void>;
}

/** Starts the shop, a store and the workspace (see the file's comment). */
export async function openShopWorld(prefix: string): Promise<ShopWorld> {
  const apps = await startBrowserApps();
  const { store, cleanup } = await tempStore(`${prefix}-`);
  const workspace = mkdtempSync(join(tmpdir(), `${prefix}-ws-`));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
  writeFileSync(
    join(workspace, ".ai", "agents", "shopper.yaml"),
    `directive: browser\nbrowser:\n  allow_hosts: ["${apps.host}"]\n  events: false\n`,
  );
  const assemble = (target: EventStore, provider: Provider) =>
    assembleAgent({
      workspace,
      home: workspace,
      store: target,
      continuity: SHOP,
      env: {},
      agent: "shopper",
      provider,
      model: SMALL_MODEL,
    });
  return {
    apps,
    store,
    workspace,
    assemble,
    hits: () => [...apps.hits.values()].reduce((sum, n) => sum + n, 0),
    async shop(text, provider, catalogue) {
      const assembled = assemble(store, provider);
      const runtime = createAgentRuntime({ store, ...assembled.options, catalogue });
      try {
        const result = await runtime.submit(SHOP, { text, actor: "ada", origin: "t" });
        await runtime.settled(SHOP);
        return result;
      } finally {
        await runtime.close();
        await assembled.close();
      }
    },
    async replay(catalogue) {
      const assembled: AssembledAgent[] = [];
      try {
        return await replayContinuity({
          source: store,
          continuity: SHOP,
          stallMs: 5000,
          makeRuntime: ({ store: target, provider, intercept }) => {
            const again = assemble(target, provider);
            assembled.push(again);
            return createAgentRuntime({ store: target, ...again.options, catalogue, intercept });
          },
        });
      } finally {
        for (const again of assembled) await again.close();
      }
    },
    async close() {
      await cleanup();
      await apps.close();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/**
 * The shopper's actions on the pages before payment, by the page title in its last results: the
 * shop's start (after the user's request), the cart and the shipping form, refs read from the
 * snapshot there. Undefined on any other page.
 */
export function checkoutStep(last: string, origin: string): string | undefined {
  if (last.includes("Buy what is in my cart")) {
    return `${tool("a1", "browser.navigate", { url: `${origin}/shop` })}${tool("a2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Cart"')) {
    return `${tool("b1", "browser.click", { ref: refOf(last, "button", "Checkout") })}${tool("b2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Shipping"')) {
    return [
      tool("c1", "browser.type", {
        ref: refOf(last, "textbox", "Full name"),
        text: "Ada Lovelace",
      }),
      tool("c2", "browser.type", { ref: refOf(last, "textbox", "Address"), text: "1 Main St" }),
      tool("c3", "browser.select", { ref: refOf(last, "combobox", "Country"), values: ["France"] }),
      tool("c4", "browser.click", { ref: refOf(last, "button", "Continue to payment") }),
      tool("c5", "browser.snapshot", {}),
    ].join("");
  }
  return undefined;
}
