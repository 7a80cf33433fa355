/**
 * OTLP settings from the environment as the OpenTelemetry specification reads them, the GenAI
 * attribute names as the semantic-conventions package spells them, and headers (a collector's
 * key) that reach the collector and nothing else.
 */
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../src/spec/index.js";
import {
  ATTR,
  OPERATION,
  openOtlpSink,
  resolveOtlpSettings,
  type SpanRecord,
  tracesWanted,
} from "../src/telemetry/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.js";

describe("OTLP settings", () => {
  it("take the traces endpoint as it is, and add /v1/traces to the base endpoint", () => {
    expect(resolveOtlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }).url).toBe(
      "http://c:4318/v1/traces",
    );
    expect(
      resolveOtlpSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9000/custom",
      }).url,
    ).toBe("http://t:9000/custom");
    expect(resolveOtlpSettings({}, "https://c.example/otlp").url).toBe(
      "https://c.example/otlp/v1/traces",
    );
    const settings = resolveOtlpSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "x-a=1, authorization=Bearer%20k",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-a=2",
      OTEL_SERVICE_NAME: "my-agent",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
    });
    expect(settings).toMatchObject({
      headers: { "x-a": "2", authorization: "Bearer k" },
      serviceName: "my-agent",
      resource: { "deployment.environment": "prod" },
      timeoutMs: 10_000,
    });
  });

  it("turn export on only with an endpoint, and off with OTEL_SDK_DISABLED", () => {
    expect(tracesWanted({})).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318" })).toBe(true);
    expect(
      tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
  });

  it("refuse a malformed endpoint or header list, naming the variable", () => {
    const bad = () => resolveOtlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT is not an http\(s\) URL/);
    expect(() =>
      resolveOtlpSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_HEADERS: "=v",
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
  });
});

describe("attribute names", () => {
  it("are the GenAI semantic conventions' own", () => {
    const conventions: Record<string, string> = {
      operationName: semconv.ATTR_GEN_AI_OPERATION_NAME,
      providerName: semconv.ATTR_GEN_AI_PROVIDER_NAME,
      conversationId: semconv.ATTR_GEN_AI_CONVERSATION_ID,
      agentName: semconv.ATTR_GEN_AI_AGENT_NAME,
      agentId: semconv.ATTR_GEN_AI_AGENT_ID,
      requestModel: semconv.ATTR_GEN_AI_REQUEST_MODEL,
      responseModel: semconv.ATTR_GEN_AI_RESPONSE_MODEL,
      responseId: semconv.ATTR_GEN_AI_RESPONSE_ID,
      finishReasons: semconv.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      inputTokens: semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      cacheReadTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
      cacheCreationTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      reasoningTokens: semconv.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
      toolName: semconv.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: semconv.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: semconv.ATTR_GEN_AI_TOOL_TYPE,
      toolCallArguments: semconv.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
      toolCallResult: semconv.ATTR_GEN_AI_TOOL_CALL_RESULT,
      inputMessages: semconv.ATTR_GEN_AI_INPUT_MESSAGES,
      outputMessages: semconv.ATTR_GEN_AI_OUTPUT_MESSAGES,
      errorType: semconv.ATTR_ERROR_TYPE,
    };
    for (const [key, name] of Object.entries(conventions)) {
      expect(ATTR[key as keyof typeof ATTR], key).toBe(name);
    }
    expect(OPERATION).toEqual({
      invokeAgent: semconv.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      chat: semconv.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      executeTool: semconv.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
  });
});

describe("export", () => {
  let collector: OtlpReceiver;
  let workspace: Workspace;
  beforeEach(async () => {
    collector = await startOtlpReceiver();
    workspace = createWorkspace("spool-otel-settings-");
  });
  afterEach(async () => {
    await collector.close();
    workspace.remove();
  });

  const span: SpanRecord = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    name: "invoke_agent a",
    kind: "internal",
    startTime: "2026-01-02T03:04:05.006Z",
    endTime: "2026-01-02T03:04:06.000Z",
    status: { code: "unset" },
    attributes: { [ATTR.agentName]: "a" },
    events: [],
    links: [],
  };

  it("sends the collector's headers to it and reports a refused request without them", async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20sekrit-key",
    };
    const sink = await openOtlpSink(resolveOtlpSettings(env));
    sink.send([span]);
    await sink.close();
    expect(collector.requests[0]!.headers.authorization).toBe("Bearer sekrit-key");
    expect(collector.spans.map((received) => received.startTimeUnixNano)).toEqual([
      "1767323045006000000",
    ]);

    const errors: Error[] = [];
    const refused = await openOtlpSink(
      resolveOtlpSettings({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.endpoint}/nowhere` }),
      { onError: (error) => errors.push(error) },
    );
    refused.send([span]);
    await refused.close();
    expect([refused.exported, refused.failed]).toEqual([0, 1]);
    expect(errors.map((error) => error.message).join("\n")).not.toContain("sekrit");
    expect(errors[0]!.message).toContain("did not take 1 span(s)");
  });

  it("makes spool trace refuse a bad endpoint with a usage error", async () => {
    const result = await runSpool(["trace", "anything", "--otlp", "not a url"], {
      cwd: workspace.dir,
      env: workspace.env(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--otlp is not an http(s) URL");
  });
});
