/**
 * The browser beside `@playwright/mcp` on one large page (a catalogue admin of about 5,000
 * elements, served on loopback): how many tokens a whole-page snapshot costs (o200k_base, what
 * `gpt-tokenizer` counts for OpenAI's current models), whether every visible interactive element
 * is addressable by a ref, how long a snapshot takes, and the latency of a click by ref. Spool's
 * tools are called as an agent's actions call them (the browser test harness: the relic host, the
 * log, the tools' schemas); the peer's as an MCP client calls them, over stdio. Both drive the
 * same Chromium build; each run navigates both afresh.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { EngineSection } from "../report.js";
import { median, summarizeLatencies } from "../stats.js";
import { cataloguePage, serveCatalogue } from "./catalogue-page.js";
import { type PlaywrightMcpPeer, startPlaywrightMcp } from "./playwright-mcp-peer.js";
import { openSpoolBrowser, type SpoolBrowser } from "./spool-browser.js";

const ROWS = Number(process.env.BENCH_BROWSER_ROWS ?? 162);
const SNAPSHOTS = 5;
const CLICKS = Number(process.env.BENCH_BROWSER_CLICKS ?? 40);
/** Spool's snapshot budget, raised so the whole page fits (the default is 20,000 characters). */
const MAX_CHARS = 1_000_000;

/** Run in the page: its elements, and the names of its visible interactive elements. */
const AUDIT = `() => {
  const interactive = [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')];
  const visible = interactive.filter((el) => el.checkVisibility({ checkVisibilityCSS: true }) && !el.closest('[aria-hidden="true"]'));
  return JSON.stringify({ elements: document.querySelectorAll('*').length, interactive: interactive.length, names: visible.map((el) => el.dataset.name) });
}`;

interface Audit {
  elements: number;
  interactive: number;
  names: string[];
}

/** The value of a `browser_evaluate` result (under `### Result`, as JSON). */
function parseResult(text: string): unknown {
  const body = /### Result\n([\s\S]*?)(?:\n### |$)/.exec(text)?.[1];
  if (body === undefined) throw new Error(`no result in ${text.slice(0, 300)}`);
  const value = JSON.parse(body) as unknown;
  return typeof value === "string" ? JSON.parse(value) : value;
}

/**
 * A name without its icons: Spool names a button by its whole text, so `✎ Edit SKU-1000` (the
 * icon is `aria-hidden`) where the page's `data-name` says `Edit SKU-1000`.
 */
function plain(name: string): string {
  return name.replace(/[^\p{L}\p{N}:\- ]/gu, "").trim();
}

/** The names that Spool's snapshot gives a ref (`button "Edit SKU-1000" [e12]`). */
function spoolRefNames(snapshot: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const match of snapshot.matchAll(/ ("(?:[^"\\]|\\.)*") \[(e\d+)\]/g)) {
    names.set(plain(JSON.parse(match[1]!) as string), match[2]!);
  }
  return names;
}

/**
 * The names that the peer's snapshot gives a ref (`button "Edit SKU-1000" [ref=e12]`; `f1e12`
 * after a navigation).
 */
function peerRefNames(snapshot: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const match of snapshot.matchAll(/ "((?:[^"\\]|\\.)*)"(?: \[[a-z]+\])* \[ref=(\w+)\]/g)) {
    names.set(plain(match[1]!), match[2]!);
  }
  return names;
}

/** The `Edit SKU-…` buttons to click, spread over the table. */
function clickTargets(): string[] {
  return Array.from({ length: CLICKS }, (_, i) => `Edit SKU-${1000 + ((i * 7) % ROWS)}`);
}

async function spoolSnapshot(browser: SpoolBrowser): Promise<{ text: string; ms: number }> {
  const start = performance.now();
  const result = await browser.call("snapshot", { max_chars: MAX_CHARS });
  const ms = performance.now() - start;
  if (result.truncated) throw new Error("Spool's snapshot was truncated: raise MAX_CHARS");
  return { text: result.snapshot as string, ms };
}

async function peerSnapshot(peer: PlaywrightMcpPeer): Promise<{ text: string; ms: number }> {
  const start = performance.now();
  const text = await peer.call("browser_snapshot", {});
  return { text, ms: performance.now() - start };
}

/**
 * Snapshot tokens (target ≤ 70% of the peer's), addressable elements (target: all), snapshot
 * time and click latency, Spool beside `@playwright/mcp`.
 */
export async function measureBrowserSnapshot(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const site = await serveCatalogue(cataloguePage(ROWS));
  const output = mkdtempSync(join(tmpdir(), "spool-bench-mcp-"));
  let browser: SpoolBrowser | undefined;
  let peer: PlaywrightMcpPeer | undefined;
  try {
    browser = await openSpoolBrowser({
      allow_hosts: [site.host],
      snapshot_chars: MAX_CHARS / 10,
      events: false,
    });
    peer = await startPlaywrightMcp(output);
    const tokens = { spool: [] as number[], peer: [] as number[] };
    const chars = { spool: [] as number[], peer: [] as number[] };
    const snapMs = { spool: [] as number[], peer: [] as number[] };
    const click = {
      spool: { p50: [] as number[], p99: [] as number[] },
      peer: { p50: [] as number[], p99: [] as number[] },
    };
    const addressable: number[] = [];
    let audit: Audit | undefined;
    let peerAddressable = 0;
    let spoolRefCount = 0;
    for (let run = 0; run < runs; run++) {
      const url = `${site.origin}/catalogue?run=${run}`;
      await browser.call("navigate", { url });
      await peer.call("browser_navigate", { url });
      audit = parseResult(await peer.call("browser_evaluate", { function: AUDIT })) as Audit;
      const spoolTimes: number[] = [];
      const peerTimes: number[] = [];
      let spoolText = "";
      let peerText = "";
      for (let i = 0; i < SNAPSHOTS; i++) {
        const s = await spoolSnapshot(browser);
        const p = await peerSnapshot(peer);
        spoolTimes.push(s.ms);
        peerTimes.push(p.ms);
        spoolText = s.text;
        peerText = p.text;
      }
      snapMs.spool.push(median(spoolTimes));
      snapMs.peer.push(median(peerTimes));
      tokens.spool.push(countTokens(spoolText));
      tokens.peer.push(countTokens(peerText));
      chars.spool.push(spoolText.length);
      chars.peer.push(peerText.length);
      const spoolRefs = spoolRefNames(spoolText);
      const peerRefs = peerRefNames(peerText);
      addressable.push(audit.names.filter((name) => spoolRefs.has(name)).length);
      spoolRefCount = spoolText.match(/ \[e\d+\]/g)?.length ?? 0;
      peerAddressable = audit.names.filter((name) => peerRefs.has(name)).length;
      progress(`browser: snapshots run ${run + 1}/${runs}`);

      const spoolClicks: number[] = [];
      const peerClicks: number[] = [];
      for (const name of clickTargets()) {
        const spoolRef = spoolRefs.get(name);
        const peerRef = peerRefs.get(name);
        if (!spoolRef || !peerRef) {
          const [side, text] = spoolRef ? ["the peer", peerText] : ["Spool", spoolText];
          throw new Error(`no ref for ${name} in ${side}'s snapshot:\n${text.slice(0, 2_000)}`);
        }
        let start = performance.now();
        await browser.call("click", { ref: spoolRef });
        spoolClicks.push(performance.now() - start);
        start = performance.now();
        await peer.call("browser_click", { target: peerRef, element: name });
        peerClicks.push(performance.now() - start);
      }
      // The page counts the clicks on its Edit buttons: both sides' clicks must have landed.
      const spoolCount = (await browser.call("snapshot", { selector: "#clicks" })).snapshot;
      const peerCount = parseResult(
        await peer.call("browser_evaluate", {
          function: "() => document.getElementById('clicks').textContent",
        }),
      );
      if (spoolCount !== JSON.stringify(String(CLICKS)) || Number(peerCount) !== CLICKS) {
        throw new Error(`clicks counted: Spool ${spoolCount}, the peer ${String(peerCount)}`);
      }
      const s = summarizeLatencies(spoolClicks);
      const p = summarizeLatencies(peerClicks);
      click.spool.p50.push(s.p50);
      click.spool.p99.push(s.p99);
      click.peer.p50.push(p.p50);
      click.peer.p99.push(p.p99);
      progress(`browser: clicks run ${run + 1}/${runs}`);
    }
    const found = audit!;
    const n = (value: number) => Math.round(value).toLocaleString("en-US");
    return {
      title: "Browser: snapshot and actions vs @playwright/mcp",
      engine: `@playwright/mcp ${peer.version}, Chromium from @sparticuz/chromium`,
      baseline: "@playwright/mcp",
      rows: [
        {
          measure: `snapshot tokens, whole page (${n(found.elements)} elements)`,
          unit: "tokens",
          spool: median(tokens.spool),
          ceiling: median(tokens.peer),
          target: { maxRatio: 0.7 },
        },
        {
          measure: "visible interactive elements with a ref (baseline: all on the page)",
          unit: "elements",
          spool: median(addressable),
          ceiling: found.names.length,
          target: { minRatio: 1 },
        },
        {
          measure: "snapshot time p50",
          unit: "ms",
          spool: median(snapMs.spool),
          ceiling: median(snapMs.peer),
        },
        {
          measure: "click by ref p50",
          unit: "ms",
          spool: median(click.spool.p50),
          ceiling: median(click.peer.p50),
        },
        {
          measure: "click by ref p99",
          unit: "ms",
          spool: median(click.spool.p99),
          ceiling: median(click.peer.p99),
        },
      ],
      notes: [
        `The page: a catalogue admin of ${ROWS} product rows (BENCH_BROWSER_ROWS), ${n(found.elements)} elements, ${n(found.interactive)} interactive ones of which ${n(found.names.length)} visible (links, buttons, inputs, selects, textareas, checkboxes); hidden ones (a closed dialog, \`hidden\` rows, a \`visibility: hidden\` menu) are left out of the count.`,
        `Tokens: o200k_base (gpt-tokenizer) of Spool's \`browser.snapshot\` text (max_chars raised to ${n(MAX_CHARS)} so it is whole; it was not truncated) beside the text of the peer's \`browser_snapshot\` result; ${n(median(chars.spool))} vs ${n(median(chars.peer))} characters.`,
        `Addressable: each visible interactive element found by its (unique) accessible name on a line with a ref; Spool's snapshot has ${n(spoolRefCount)} refs in all${spoolRefCount === found.names.length ? " (none for a hidden element)" : ""}; the peer's gives ${n(peerAddressable)} of the ${n(found.names.length)} a ref.`,
        `Each run navigates both afresh; Spool numbers refs across the session and the peer prefixes them after a navigation (\`f1e12\`), so later runs' refs are a few characters longer on both sides. Snapshot time: p50 of ${SNAPSHOTS} whole-page snapshots per run, alternating Spool and the peer. Clicks: ${CLICKS} clicks per run on \`Edit\` buttons across the table, by ref, alternating; each side's tool call end to end (Spool: the tool through the relic host, its calls logged to SQLite; the peer: an MCP call over stdio); each run checks that the page counted every click of both.`,
        `Peer: \`${peer.commandLine.replace(output, "<tmp>")}\` (its default 500 ms settle after an action stays).`,
      ],
    };
  } finally {
    await browser?.close();
    await peer?.close();
    await site.close();
    rmSync(output, { recursive: true, force: true });
  }
}
