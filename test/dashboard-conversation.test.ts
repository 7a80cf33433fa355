/**
 * The dashboard in a real Chromium against the real server (`src/server`) over a real SQLite
 * store, with a real agent answering through the openai SDK from a loopback model server: the
 * live conversation (a reload in the middle of a streaming answer, actions with status and
 * duration), the thread chain across a handoff, a step's context, the event log's filters, tokens
 * and spend, and server errors shown plainly. One server and one Chromium serve the whole file.
 */
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardWorld, startDashboardWorld } from "./support/dashboard-world.js";
import { buildHandoffLog, CHAT, T1, T2 } from "./support/handoff-log.js";
import { openaiTextFrames } from "./support/openai-sse.js";

let world: DashboardWorld;

describe("the dashboard against the server", () => {
  beforeAll(async () => {
    world = await startDashboardWorld("spool-dashboard-conversation-");
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  /** What a person reads in `locator` (Playwright's `innerText`: rendered text, as laid out). */
  function shown(locator: Locator): Promise<string> {
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's method, not the DOM property
    return locator.innerText();
  }

  /** A page of the dashboard with the world's token stored. */
  async function open(path: string): Promise<Page> {
    const page = await world.page(path);
    await page
      .locator(".live-status.live")
      .or(page.getByRole("heading", { name: "Continuities" }))
      .first()
      .waitFor();
    return page;
  }

  describe("the conversation page", () => {
    it("goes on after a reload in the middle of a streaming answer, and shows the answer once", async () => {
      const continuity = await world.createContinuity("reload");
      const gate = world.model.hold(
        openaiTextFrames([
          "<response>The answer ",
          "is forty",
          "-two, as **computed**.</response>",
        ]),
        2,
      );
      const page = await open(`/c/${continuity}`);
      await page.getByRole("textbox", { name: "Message" }).fill("What is six times seven?");
      await page.getByRole("textbox", { name: "Message" }).press("Enter");
      await expect
        .poll(() => page.locator(".turn-text").allInnerTexts())
        .toEqual(["What is six times seven?"]);
      const step = page.locator("[data-step]").first();
      await step.getByText("The answer is forty").waitFor();
      expect(await step.getAttribute("aria-busy")).toBe("true");

      await page.reload();
      await page.locator("[data-step]").first().getByText("The answer is forty").waitFor();
      gate.release();
      await page.locator('[data-step][aria-busy="false"]').first().waitFor();
      const responses = await page.locator(".response").allInnerTexts();
      expect(responses).toEqual(["The answer is forty-two, as computed."]);
      expect(await page.locator(".response strong").allInnerTexts()).toEqual(["computed"]);
      expect(await page.locator(".turn-text").allInnerTexts()).toEqual([
        "What is six times seven?",
      ]);
      await page.context().close();
    });

    it("shows each action with its status and duration, and the response after it", async () => {
      const continuity = await world.createContinuity("actions");
      world.model.answer(
        openaiTextFrames([
          '<thought>Checking the clock.</thought><action type="tool" mode="sync" id="t1">{"name": "clock.now", "parameters": {}}</action>',
        ]),
        openaiTextFrames(["<response>Done: I looked at the **clock**.</response>"]),
      );
      const page = await open(`/c/${continuity}`);
      await page.getByRole("textbox", { name: "Message" }).fill("What time is it?");
      await page.getByRole("button", { name: "Send" }).click();
      const action = page.locator(".action").first();
      await action.and(page.locator('[data-status="succeeded"]')).waitFor();
      expect(await shown(action.locator(".name"))).toBe("tool clock.now");
      expect(await shown(action.locator(".status"))).toBe("succeeded");
      expect(await shown(action.locator(".duration"))).toMatch(/^\d+(\.\d)? (ms|s)$/);
      await page.getByText("Done: I looked at the clock.").waitFor();
      expect(await shown(page.locator(".thought summary").first())).toBe("thinking");
      await page.context().close();
    });

    it("shows the server's refusal of a turn plainly", async () => {
      const page = await world.page("/c/nobody-here", "spool_not-a-real-token");
      await page.getByRole("alert").first().waitFor();
      const alert = await shown(page.getByRole("alert").first());
      expect(alert).toMatch(/auth\./);
      expect(alert).not.toContain("spool_not-a-real-token");
      await page.context().close();
    });
  });

  describe("the other pages", () => {
    it("lists the continuities, each a link to its conversation", async () => {
      await world.createContinuity("listed", "A listed chat");
      const page = await open("/");
      const row = page.getByRole("row").filter({ hasText: "A listed chat" });
      await row.waitFor();
      await row.getByRole("link").click();
      await page.waitForURL(/\/c\/listed$/);
      await page
        .getByRole("navigation", { name: "Pages" })
        .getByRole("link", { name: "Threads" })
        .waitFor();
      await page.context().close();
    });

    it("shows the thread chain with the handoff between the two threads", async () => {
      await buildHandoffLog(world.store);
      const page = await open(`/c/${CHAT}/threads`);
      const chain = page.getByRole("list", { name: `Chain ${T1}` });
      await chain.waitFor();
      const cards = await chain.locator(".thread-id").allInnerTexts();
      expect(cards).toEqual([T1, T2]);
      const handoff = await shown(chain.getByRole("note", { name: "Handoff" }));
      expect(handoff).toContain("pressure 0.91");
      expect(handoff).toContain("7,402 → 2,310 tokens");
      expect(handoff).toContain("summary 812 tokens");
      expect(await shown(page.locator(`[data-thread="${T1}"] .badge`))).toBe("continued");
      await page.context().close();
    });

    it("shows a step's context and filters the event log", async () => {
      const continuity = await world.createContinuity("context");
      world.model.answer(openaiTextFrames(["<response>Hello.</response>"]));
      await world.turn(continuity, "Say hello");
      const page = await open(`/c/${continuity}/context`);
      await page.getByRole("table", { name: "Context parts" }).waitFor();
      const parts = await page
        .getByRole("table", { name: "Context parts" })
        .locator("th")
        .allInnerTexts();
      expect(parts).toContain("system");
      expect(parts).toContain("messages");
      expect(await shown(page.locator(".facts").first())).toMatch(/tokens\s+[\d,]+ of [\d,]+/);

      await page.getByRole("link", { name: "Events" }).click();
      const log = page.getByRole("table", { name: "Event log" });
      await log.locator('[data-type="turn.added"]').waitFor();
      await page.getByLabel("type").selectOption("step");
      await expect
        .poll(async () => new Set(await log.locator("td.type").allInnerTexts()))
        .toEqual(new Set(["step.started", "step.completed"]));
      await page.getByLabel("type").selectOption("");
      await page.getByLabel("search").fill("Say hello");
      await expect.poll(() => log.locator("td.type").allInnerTexts()).toContain("turn.added");
      await page.context().close();
    });

    it("plots tokens and spend over time, with totals", async () => {
      const continuity = await world.createContinuity("usage");
      world.model.answer(openaiTextFrames(["<response>One.</response>"]));
      await world.turn(continuity, "Count");
      const page = await open(`/c/${continuity}/usage`);
      const totals = page.getByRole("definition").first();
      await expect.poll(() => shown(totals)).toBe("12");
      await page.getByRole("img", { name: "Tokens per model step over time" }).waitFor();
      await page
        .getByRole("img", { name: "Spend over time (US dollars, running total)" })
        .waitFor();
      expect(await shown(page.getByRole("table", { name: "Usage by model" }))).toContain(
        "loopback",
      );
      await page.context().close();
    });
  });
});
