import { afterEach, beforeEach, expect } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import {
  createAnthropicProvider,
  createOpenAIChatProvider,
  createProvider,
  type Provider,
  resolveProviderSettings,
} from "../../src/providers/index.js";
import { type AgentSpec, createAgentRuntime } from "../../src/runtime/index.js";
import { fixtureBytes, type ReplayServer, startReplayServer } from "./replay-server.js";
import { dataLines, type RecordingTool, replay } from "./runtime-e2e.js";
import { readAll, tempStore } from "./transcripts.js";

// The agent runtime end to end: real provider SDKs read recorded provider streams from a loopback
// server, the runtime runs the tool calls in them and sends the results back, and every
// continuity written here replays as identical without calling the server or a tool again.

/** The continuity every provider end-to-end test writes. */
export const continuity = "home";
/** Fake keys shaped like real ones: none may ever reach the log. */
export const ANTHROPIC_KEY = "sk-ant-test-e2e-key-0123456789abcdef";
export const OPENAI_KEY = "sk-test-e2e-key-0123456789abcdefABCD";

/** The id of the response a recorded Responses stream carries. */
export const responseIdOf = (path: string) =>
  String((dataLines(path)[0]!.response as { id: string }).id);

/**
 * A fresh store and loopback replay server for each test of the calling file (registered as its
 * `beforeEach`/`afterEach`), and the helpers that use them.
 */
export function useProviderE2e() {
  let store: EventStore;
  let cleanup: () => Promise<void>;
  let server: ReplayServer;
  beforeEach(async () => {
    ({ store, cleanup } = await tempStore("spool-runtime-e2e-"));
    server = await startReplayServer();
  });
  afterEach(async () => {
    await server.close();
    await cleanup();
  });

  return {
    /** The test's loopback server. */
    get server(): ReplayServer {
      return server;
    },
    /** The test's store (its artifacts are the runtime's). */
    get store(): EventStore {
      return store;
    },
    anthropic: () =>
      createAnthropicProvider({
        apiKey: ANTHROPIC_KEY,
        baseURL: server.url,
        transport: { maxAttempts: 1 },
      }),
    openaiChat: () =>
      createOpenAIChatProvider({
        apiKey: OPENAI_KEY,
        baseURL: `${server.url}/v1`,
        flavour: "openai",
        env: {},
        transport: { maxAttempts: 1 },
      }),
    fromSettings: (provider: string, model: string) =>
      createProvider(
        resolveProviderSettings(
          { provider, model, apiKey: OPENAI_KEY, baseURL: `${server.url}/v1` },
          {},
        ),
        { transport: { maxAttempts: 1 } },
      ),
    /** Serves each fixture in turn, as the chunks `split` cuts it into. */
    serve(
      paths: readonly string[],
      split: (bytes: Buffer, index: number) => (string | Uint8Array)[] = (bytes) => [bytes],
    ): void {
      server.respond(...paths.map((path, index) => ({ chunks: split(fixtureBytes(path), index) })));
    },
    /** Runs one turn; resolves with its result and the whole log. */
    async runTurn(provider: Provider, agent: AgentSpec, text: string) {
      const runtime = createAgentRuntime({ store, provider, agent });
      const result = await runtime.submit(continuity, { text, actor: "ada", origin: "test" });
      await runtime.close();
      const events = await readAll(store, continuity);
      return { result, events };
    },
    /** The JSON body of the `index`th request the server received. */
    body: (index: number) =>
      JSON.parse(server.requests[index]!.body) as Record<string, unknown> & {
        messages?: Record<string, unknown>[];
        input?: Record<string, unknown>[];
      },
    /**
     * Replays the continuity with the runtime `agent` describes: it must be identical, and must
     * call neither the server nor any tool.
     */
    async expectIdenticalReplay(agent: AgentSpec, tools: RecordingTool[] = [], knownBug?: string) {
      const requests = server.requests.length;
      const calls = tools.map((tool) => tool.calls.length);
      const report = await replay(store, continuity, agent);
      expect(
        report.difference,
        `${knownBug ? `${knownBug}\n` : ""}replay differs: ${JSON.stringify(report.difference, null, 2)}`,
      ).toBeUndefined();
      expect(report.identical).toBe(true);
      expect(report.compared).toBeGreaterThan(0);
      expect(server.requests.length, "replay must not call the provider").toBe(requests);
      expect(
        tools.map((tool) => tool.calls.length),
        "replay must not run a tool",
      ).toEqual(calls);
    },
  };
}
