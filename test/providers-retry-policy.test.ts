import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createAnthropicProvider,
  createOpenAIChatProvider,
  MODEL_RETRY,
  modelRetryDelay,
  type Provider,
  type TransportOptions,
} from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";
import { agentSpec, ofType } from "./support/runtime-e2e.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-retry-policy-");
let server: ReplayServer;
/** A loopback port nothing listens on: connections to it are refused. */
let refusedURL: string;

beforeAll(async () => {
  server = await startReplayServer();
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  refusedURL = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

const RANDOM = 0.5;

/** Every wait, whoever asks for it: the transport's and the runtime's (a step retry). */
function waits() {
  const all: number[] = [];
  const sleep = async (ms: number) => {
    all.push(ms);
  };
  const transport: TransportOptions = { random: () => RANDOM, sleep };
  return { all, sleep, transport };
}

type Make = (baseURL: string, transport: TransportOptions) => { provider: Provider; model: string };

const PROVIDERS: Array<{
  name: string;
  make: Make;
  path: string;
  /** Where the `curl` of a connection failure points, below the server's origin. */
  check: string;
  tooMany: string;
}> = [
  {
    name: "Anthropic",
    path: "",
    check: "/v1/models",
    make: (baseURL, transport) => ({
      provider: createAnthropicProvider({
        apiKey: "sk-ant-test-key-0123456789",
        baseURL,
        transport,
      }),
      model: "claude-sonnet-4-5",
    }),
    tooMany: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
  },
  {
    name: "an OpenAI-compatible server (Ollama)",
    path: "/v1",
    check: "/v1/models",
    make: (baseURL, transport) => ({
      provider: createOpenAIChatProvider({ flavour: "ollama", baseURL, transport, env: {} }),
      model: "gpt-4o",
    }),
    tooMany: '{"error":{"message":"slow down","type":"rate_limit_exceeded"}}',
  },
];

/** Runs one turn on `provider` to its end; returns the continuity's events. */
async function runTurn(provider: Provider, model: string, sleep: (ms: number) => Promise<void>) {
  const runtime = createAgentRuntime({
    store: temp.store,
    provider,
    agent: { ...agentSpec(model, []), nativeTools: false },
    sleep,
    random: () => RANDOM,
  });
  const result = await runtime.submit("home", { text: "hi", actor: "ada", origin: "test" });
  await runtime.close();
  return { result, events: await readAll(temp.store, "home") };
}

function expectOnePolicy(events: SpoolEvent[], all: number[], code: string) {
  const attempts = MODEL_RETRY.maxAttempts;
  // The one formula: 1 s doubling, jitter taking RANDOM × half of it.
  const expected = Array.from({ length: attempts - 1 }, (_, i) =>
    modelRetryDelay(i + 1, undefined, () => RANDOM),
  );
  expect(expected).toEqual([750, 1500, 3000]);
  expect(all).toEqual(expected);
  const retrying = ofType(events, "provider.retrying").map(
    (event) => event.data as EventData<"provider.retrying">,
  );
  expect(retrying.map((data) => [data.attempt, data.delay_ms, data.error.code])).toEqual(
    expected.map((delay, i) => [i + 1, delay, code]),
  );
  const failed = ofType(events, "message.failed").map(
    (event) => event.data as EventData<"message.failed">,
  );
  expect(failed).toHaveLength(1);
  expect(failed[0]!.error).toMatchObject({ code, retryable: false });
  expect(failed[0]!.error.message).toContain(`gave up after ${attempts} attempts`);
  const decisions = ofType(events, "loop.decided").map(
    (event) => (event.data as EventData<"loop.decided">).decision,
  );
  expect(decisions).toEqual(["fail"]);
}

describe("one retry policy for model calls", () => {
  for (const { name, make, path, check, tooMany } of PROVIDERS) {
    it(`a server answering 429 every time costs ${MODEL_RETRY.maxAttempts} requests on ${name}, waits per the one formula`, async () => {
      server.respond({
        status: 429,
        headers: { "content-type": "application/json" },
        chunks: [tooMany],
      });
      const { all, sleep, transport } = waits();
      const { provider, model } = make(`${server.url}${path}`, transport);
      const { result, events } = await runTurn(provider, model, sleep);
      expect(result.status).toBe("failed");
      expect(server.requests).toHaveLength(MODEL_RETRY.maxAttempts);
      expectOnePolicy(events, all, "provider.rate-limited");
    });

    it(`a refused connection on ${name} is retried by the same policy`, async () => {
      const { all, sleep, transport } = waits();
      const { provider, model } = make(`${refusedURL}${path}`, transport);
      const { result, events } = await runTurn(provider, model, sleep);
      expect(result.status).toBe("failed");
      expectOnePolicy(events, all, "provider.connection");
    });

    it(`a refused connection on ${name} names the base URL and how to check it, in every retry and the failure`, async () => {
      const { sleep, transport } = waits();
      const { provider, model } = make(`${refusedURL}${path}`, transport);
      const { events } = await runTurn(provider, model, sleep);
      const expected = `could not connect to ${refusedURL}${path} (connection refused): is the server running, and is that its address and port? Check with \`curl ${refusedURL}${check}\``;
      const retried = ofType(events, "provider.retrying").map(
        (event) => (event.data as EventData<"provider.retrying">).error.message,
      );
      expect(retried).toHaveLength(MODEL_RETRY.maxAttempts - 1);
      for (const message of retried) expect(message).toContain(expected);
      const failed = ofType(events, "message.failed").map(
        (event) => (event.data as EventData<"message.failed">).error.message,
      );
      expect(failed).toHaveLength(1);
      expect(failed[0]).toContain(expected);
      expect(failed[0]).toMatch(/^(anthropic|ollama): could not connect to /);
    });
  }
});
