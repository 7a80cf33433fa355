/**
 * A screenshot in a window too small for it: the step after it would not fit even with every
 * long input cut, so the context leaves the image out (saying so where it stood) instead of
 * failing the run; with room, the same screenshot is sent as an image. The small window is
 * measured from the roomy run (between its two steps' compiled sizes), so the test does not
 * depend on the directive's length. The cramped log replays identically with no browser.
 */
import { afterAll, describe, expect, it } from "vitest";
import { IMAGE_LEFT_OUT } from "../src/continuity/index.js";
import type { ProviderRequest } from "../src/providers/index.js";
import { type EventData, isEvent } from "../src/spec/index.js";
import { lastUser, tool } from "./support/browser-model.js";
import { openShopWorld, SHOP, type ShopWorld } from "./support/browser-shop.js";
import { answeringProvider, smallCatalogue } from "./support/continuity-run.js";
import { readAll } from "./support/transcripts.js";

const worlds: ShopWorld[] = [];
afterAll(async () => {
  for (const world of worlds) await world.close();
});

/** The shopper takes one screenshot of the shop, then says it has seen it. */
function looker(world: ShopWorld, seen: ProviderRequest[]) {
  return answeringProvider((request) => {
    seen.push(request);
    if (lastUser(request).includes("Look at the shop")) {
      return `${tool("a1", "browser.navigate", { url: `${world.apps.origin}/shop` })}${tool("a2", "browser.screenshot", {})}`;
    }
    return "<response>Seen.</response>";
  });
}

/** The kinds of content of a request's last message (the step's results). */
function resultsParts(request: ProviderRequest): string[] {
  const message = request.messages.at(-1)!;
  if (message.role !== "user" || typeof message.content === "string") return ["text"];
  return message.content.map((part) =>
    part.type === "image" ? "image" : part.text.includes(IMAGE_LEFT_OUT) ? "left-out" : "text",
  );
}

/** One shopping run in a world of its own: its result, the requests and the compiled sizes. */
async function shopIn(window: number) {
  const world = await openShopWorld("spool-browser-small-window");
  worlds.push(world);
  const seen: ProviderRequest[] = [];
  const result = await world.shop("Look at the shop.", looker(world, seen), smallCatalogue(window));
  const sizes = (await readAll(world.store, SHOP))
    .filter((event) => isEvent(event, "context.compiled"))
    .map((event) => {
      const { parts } = event.data as EventData<"context.compiled">;
      return Object.values(parts ?? {}).reduce((sum, n) => sum + n, 0);
    });
  return { world, result, seen, sizes };
}

describe("a screenshot and the window", () => {
  it("is sent with room for it, and left out, said so, without", async () => {
    const roomy = await shopIn(65_536);
    expect(roomy.result.status).toBe("completed");
    expect(resultsParts(roomy.seen[1]!)).toContain("image");
    const [first, second] = roomy.sizes as [number, number];
    expect(second - first).toBeGreaterThan(500);

    // A window whose budget holds the first step but not the second with its image.
    const reserve = 512;
    const cramped = await shopIn(Math.floor((first + second) / 2) + reserve);
    expect(cramped.result.status).toBe("completed");
    expect(cramped.seen).toHaveLength(2);
    expect(resultsParts(cramped.seen[1]!)).toEqual(["text", "left-out"]);
    const report = await cramped.world.replay(
      smallCatalogue(Math.floor((first + second) / 2) + reserve),
    );
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  }, 180_000);
});
