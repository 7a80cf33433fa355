/**
 * A `spool run` process exporting live spans is SIGKILLed in the middle of its second model
 * call. What the collector received before the kill is, span for span, what `spool trace`
 * folds from the log afterwards; the log also gives the spans the kill cut off (the run and the
 * model call in flight), ended at their last event with an error status saying the run did not
 * finish. The process loaded the OpenTelemetry exporter (it was asked to); a run without
 * OTEL_EXPORTER_OTLP_ENDPOINT loads none of it (only the no-op API the Anthropic SDK imports).
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ATTR, type TraceTree, UNFINISHED } from "../src/telemetry/index.js";
import { type BundledScript, bundleScript } from "./support/child-process.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, spoolBundled, type Workspace } from "./support/cli-e2e.js";
import { chatStream, startLocalModelServer } from "./support/local-model-server.js";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.js";
import {
  bySpanId,
  flattenTrees,
  fromReceived,
  fromRecord,
  outline,
} from "./support/trace-spans.js";

const TIMEOUT = 60_000;
const RECORDER = fileURLToPath(new URL("./support/module-load-recorder.mjs", import.meta.url));
const ACTION =
  '<action type="tool" mode="sync" id="a1">{"name":"clock.now","parameters":{}}</action>';

/** A model server: the first call asks for a tool, the second streams a little and then hangs. */
async function hangingModel() {
  let calls = 0;
  let hung: () => void = () => undefined;
  const hanging = new Promise<void>((resolve) => {
    hung = resolve;
  });
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls += 1;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (calls === 1) return res.end(chatStream("small-local", ACTION, 1000));
      // The role chunk and no more: the call is in flight until the process dies.
      res.write(chatStream("small-local", "", 1000).split("\n\n")[0]!.concat("\n\n"));
      hung();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    hanging,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("a crashed run's spans", { timeout: TIMEOUT }, () => {
  let bundle: BundledScript;
  let workspace: Workspace;
  let collector: OtlpReceiver;
  let model: Awaited<ReturnType<typeof hangingModel>>;

  beforeAll(async () => {
    // OpenTelemetry and the Anthropic SDK (which imports the API) stay outside the bundle, so
    // the recorder sees who loads them.
    bundle = await bundleScript("src/cli/entry.ts", ["@opentelemetry/*", "@anthropic-ai/sdk"]);
  });
  afterAll(() => bundle?.remove());
  beforeEach(async () => {
    workspace = createWorkspace("spool-otel-crash-");
    collector = await startOtlpReceiver();
    model = await hangingModel();
  });
  afterEach(async () => {
    await model.close();
    await collector.close();
    workspace.remove();
  });

  const env = (extra: Record<string, string>) =>
    workspace.env({
      SPOOL_PROVIDER: "compatible",
      SPOOL_BASE_URL: model.baseURL,
      SPOOL_MODEL: "small-local",
      SPOOL_CONTEXT_WINDOW: "16384",
      NODE_OPTIONS: `--import=${RECORDER}`,
      ...extra,
    });

  it("are what live export sent up to the kill, and the cut-off spans end unfinished", async () => {
    const modules = join(workspace.home, "modules.log");
    const spool = spoolBundled(
      bundle,
      ["run", "assistant", "--continuity", "crash", "--prompt", "time?"],
      {
        cwd: workspace.dir,
        env: env({
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          SPOOL_TEST_MODULE_LOG: modules,
        }),
      },
    );
    spool.child.stdin.end();
    try {
      // The first model call and its tool ended (and were exported); the second is in flight.
      await model.hanging;
      await collector.until((spans) => spans.length >= 2);
    } finally {
      spool.kill();
    }
    expect((await spool.exited).signal).toBe("SIGKILL");
    expect(readFileSync(modules, "utf8")).toContain("/@opentelemetry/exporter-trace-otlp-http/");

    const traced = await runSpool(["trace", "crash", "--json"], {
      cwd: workspace.dir,
      env: workspace.env(),
    });
    expect(traced.code, traced.stderr).toBe(0);
    const trees = (JSON.parse(traced.stdout) as { traces: TraceTree[] }).traces;
    expect(outline(trees)).toEqual([
      "trace",
      "  invoke_agent assistant !",
      "    chat small-local",
      "    chat small-local !",
      "    execute_tool clock.now",
    ]);
    const spans = flattenTrees(trees);
    const received = bySpanId(collector.spans.map(fromReceived));
    const logged = new Map(spans.map((span) => [span.spanId, fromRecord(span)]));
    expect(received.map((span) => span.name).sort()).toEqual([
      "chat small-local",
      "execute_tool clock.now",
    ]);
    for (const span of received) expect(span).toEqual(logged.get(span.spanId));

    const run = trees[0]!.roots[0]!;
    expect(run.status).toEqual({ code: "error", message: UNFINISHED });
    expect(run.attributes[ATTR.errorType]).toBe("spool.unfinished");
    const cut = run.children.find((span) => span.status.code === "error")!;
    expect(cut.name).toBe("chat small-local");
    expect(cut.endTime <= run.endTime && cut.startTime >= run.startTime).toBe(true);
  });

  it("loads no OpenTelemetry package when no OTLP endpoint is set", async () => {
    const local = await startLocalModelServer({
      kind: "plain",
      model: "small-local",
      answer: () => ({ text: "<response>fine</response>", inputTokens: 100 }),
    });
    try {
      const modules = join(workspace.home, "modules.log");
      const spool = spoolBundled(
        bundle,
        ["run", "assistant", "--continuity", "quiet", "--prompt", "hi"],
        {
          cwd: workspace.dir,
          env: env({ SPOOL_BASE_URL: local.baseURL, SPOOL_TEST_MODULE_LOG: modules }),
        },
      );
      spool.child.stdin.end();
      expect((await spool.exited).code, spool.stderr).toBe(0);
      expect(spool.stdout).toContain("fine");
      const [started, ...lines] = readFileSync(modules, "utf8").trim().split("\n");
      expect(started).toMatch(/^started \S+/);
      const loaded = lines.map((line) => line.split(" <- ") as [string, string]);
      expect(loaded.some(([, importer]) => importer.includes("/@anthropic-ai/sdk/"))).toBe(true);
      // The Anthropic SDK imports the (no-op) @opentelemetry/api for its own use; nothing of
      // Spool's, and no SDK, exporter or resource package, is loaded.
      const otel = loaded.filter(([url]) => url.includes("@opentelemetry"));
      expect(
        otel.filter(
          ([url, importer]) =>
            !url.includes("/@opentelemetry/api/") || !importer.includes("/@anthropic-ai/sdk/"),
        ),
      ).toEqual([]);
    } finally {
      await local.close();
    }
  });
});
