import { ConfigError } from "../spec/index.js";

/** Where and how spans go over OTLP/HTTP. Holds the headers' values: never print it whole. */
export interface OtlpSettings {
  /** The traces URL (`…/v1/traces`). */
  url: string;
  /** Extra request headers (an API key of the collector, …). */
  headers: Record<string, string>;
  /** `service.name` of the resource (default `spool`). */
  serviceName: string;
  /** Resource attributes from `OTEL_RESOURCE_ATTRIBUTES`. */
  resource: Record<string, string>;
  /** Request timeout in milliseconds (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, default 10,000). */
  timeoutMs: number;
}

/** The variables that turn live export on: with neither set, nothing of OpenTelemetry loads. */
export const OTLP_ENDPOINT_VARIABLES = [
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
] as const;

/** True when `env` asks for trace export (an OTLP endpoint is set and `OTEL_SDK_DISABLED` is not). */
export function tracesWanted(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return OTLP_ENDPOINT_VARIABLES.some((name) => (env[name] ?? "").trim() !== "");
}

/** True when `env` opts into message content (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). */
export function contentWanted(env: Record<string, string | undefined>): boolean {
  return env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true";
}

/**
 * The OTLP settings `env` gives, as the OpenTelemetry specification reads them:
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`;
 * headers from `OTEL_EXPORTER_OTLP_HEADERS` and `…_TRACES_HEADERS` (`k=v,k2=v2`, URL-encoded);
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`. `endpoint` (`spool trace --otlp`) replaces
 * the endpoint variables. Throws `ConfigError` naming the variable when one is malformed.
 */
export function resolveOtlpSettings(
  env: Record<string, string | undefined>,
  endpoint?: string,
): OtlpSettings {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  let url: string;
  let source: string;
  if (endpoint !== undefined) {
    url = tracesUrl(endpoint.trim());
    source = "--otlp";
  } else if (traces) {
    url = traces;
    source = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
  } else if (base) {
    url = tracesUrl(base);
    source = "OTEL_EXPORTER_OTLP_ENDPOINT";
  } else {
    throw new ConfigError("telemetry.no-endpoint", "no OTLP endpoint is set", {
      hint: "Set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318) or pass --otlp URL",
    });
  }
  checkUrl(url, source);
  return {
    url,
    headers: {
      ...parsePairs(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS"),
      ...parsePairs(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "spool",
    resource: parsePairs(env.OTEL_RESOURCE_ATTRIBUTES, "OTEL_RESOURCE_ATTRIBUTES"),
    timeoutMs: timeout(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT),
  };
}

/** A base endpoint's traces URL: `/v1/traces` appended unless the path already ends with it. */
export function tracesUrl(endpoint: string): string {
  if (/\/v1\/traces\/?$/.test(endpoint)) return endpoint;
  return `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

function checkUrl(url: string, source: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new ConfigError("telemetry.bad-endpoint", `${source} is not an http(s) URL`, {
      hint: "Give the collector's OTLP/HTTP address, e.g. http://localhost:4318",
    });
  }
}

function parsePairs(text: string | undefined, variable: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  if (!text?.trim()) return pairs;
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    const key = at > 0 ? item.slice(0, at).trim() : "";
    if (key === "") {
      throw new ConfigError("telemetry.bad-variable", `${variable} has an entry without a key`, {
        hint: `Write it as key=value pairs separated by commas (values URL-encoded)`,
      });
    }
    pairs[key] = decode(item.slice(at + 1).trim());
  }
  return pairs;
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function timeout(text: string | undefined): number {
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) && value > 0 ? value : 10_000;
}
