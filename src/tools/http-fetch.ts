import { z } from "zod";
import { defineTool } from "../actions/index.js";
import { effectivePort, type HostRule, isHostAllowed } from "./host-allow-list.js";
import type { ToolLimits } from "./limits.js";
import { SNIFF_BYTES, utf8Boundary } from "./text-bytes.js";
import { abortedError, errnoCode, ToolError } from "./tool-error.js";

/** What `http.fetch` is built from. */
export interface HttpFetchOptions {
  /** Parsed `allowHosts` (see `parseAllowHosts`); empty refuses every host. */
  rules: readonly HostRule[];
  limits: ToolLimits;
  /** The `fetch` to use (default the global one); injected by tests and replays. */
  fetch?: typeof globalThis.fetch;
}

/** `http.fetch`'s result. Statuses of 400 and above are results too, not errors. */
export interface HttpFetchResult {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  statusText: string;
  /** A subset of the response headers, lower-case names. */
  headers: Record<string, string>;
  /** The body as text (empty for HEAD and binary bodies). */
  body: string;
  /** True when the body was cut at the cap. */
  truncated: boolean;
  /** True when the body looked binary and was left out. */
  binary: boolean;
  /** Each URL redirected to, in order. */
  redirects: string[];
}

/** Most redirects followed before `tool.too-many-redirects`. */
export const MAX_REDIRECTS = 5;

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const KEPT_HEADERS = [
  "content-type",
  "content-length",
  "content-language",
  "content-disposition",
  "last-modified",
  "etag",
  "cache-control",
  "expires",
  "date",
  "location",
  "retry-after",
  "link",
  "www-authenticate",
];
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];
const BINARY_TYPES = /^(image|audio|video|font)\/|^application\/(octet-stream|zip|gzip|pdf|x-tar)/i;

const parameters = z.strictObject({
  url: z.string().min(1).describe("The http(s) URL; its host must be on the agent's allow-list."),
  method: z.enum(METHODS).default("GET").describe("HTTP method (default GET)."),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe('Request headers, e.g. {"accept": "application/json"}.'),
  body: z.string().optional().describe("Request body as text (not with GET or HEAD)."),
});

function hostLabel(url: URL): string {
  return `${url.hostname}:${effectivePort(url)}`;
}

/** Parses and checks one URL (the first or a redirect's target) against scheme and allow-list. */
function checkUrl(raw: string, base: URL | undefined, rules: readonly HostRule[]): URL {
  let url: URL;
  try {
    url = base ? new URL(raw, base) : new URL(raw);
  } catch {
    throw new ToolError("tool.bad-url", `\`${raw}\` is not a valid URL`, {
      hint: "Give an absolute URL such as `https://example.com/page`",
    });
  }
  const via = base ? ` (a redirect from ${base.href})` : "";
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ToolError("tool.bad-url", `\`${url.protocol}\` URLs are refused${via}`, {
      hint: "http.fetch fetches http: and https: URLs only",
    });
  }
  if (url.username !== "" || url.password !== "") {
    throw new ToolError("tool.bad-url", `the URL holds credentials${via}`, {
      hint: "Remove `user:password@` from the URL; send credentials in an `authorization` header",
    });
  }
  if (!isHostAllowed(rules, url)) {
    const allowed = rules.map((rule) => rule.source).join(", ") || "none";
    throw new ToolError(
      "tool.host-not-allowed",
      `host ${hostLabel(url)} is not on this agent's allow-list${via} (allowed: ${allowed})`,
      {
        details: { host: url.hostname, port: effectivePort(url) },
        hint: "Fetch an allowed host, or ask the operator to add this host to `tools.http.fetch.allow_hosts` in the agent manifest",
      },
    );
  }
  return url;
}

function failure(error: unknown, url: URL, signal: AbortSignal, timeoutMs: number): ToolError {
  if (error instanceof ToolError) return error;
  if (signal.aborted) return abortedError(`http.fetch of ${url.href}`, error);
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return new ToolError("tool.http-failed", `${url.href} did not answer within ${timeoutMs} ms`, {
      cause: error,
      retryable: true,
      hint: "Try again later",
    });
  }
  const code =
    errnoCode((error as { cause?: unknown }).cause) ?? errnoCode(error) ?? "network error";
  return new ToolError("tool.http-failed", `fetching ${url.href} failed (${code})`, {
    cause: error,
    retryable: code !== "ENOTFOUND",
    hint:
      code === "ENOTFOUND"
        ? "Check the host name"
        : "Check the URL, or try again if the host is down",
  });
}

function decoderFor(contentType: string | null): { decode(bytes: Uint8Array): string } {
  const charset = /charset="?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8");
  } catch {
    return new TextDecoder("utf-8");
  }
}

/** Reads at most `cap` bytes of `response`'s body, then cancels the rest. */
async function readCapped(
  response: Response,
  cap: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
    if (total > cap) {
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return { bytes: Buffer.concat(chunks).subarray(0, Math.min(total, cap + 4)), truncated };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * `http.fetch`: one HTTP request to an allow-listed host, redirects followed by hand (at most
 * `MAX_REDIRECTS`, each hop's scheme and host checked again, credentials dropped across
 * origins), the body capped at `limits.fetchBytes`. Aborts with the action's signal or after
 * `limits.fetchTimeoutMs`. Declared with side effects and not idempotent, since a POST may
 * change remote state.
 */
export function httpFetchTool({ rules, limits, fetch = globalThis.fetch }: HttpFetchOptions) {
  const allowed = rules.map((rule) => rule.source).join(", ") || "none";
  return defineTool({
    name: "http.fetch",
    description:
      `Makes an HTTP request to an allowed host (allowed: ${allowed}) and returns status, main headers and the text body ` +
      `(at most ${limits.fetchBytes} bytes). Redirects are followed up to ${MAX_REDIRECTS} times.`,
    parameters,
    idempotent: false,
    sideEffects: true,
    async execute(input, context): Promise<HttpFetchResult> {
      let url = checkUrl(input.url, undefined, rules);
      if (input.body !== undefined && (input.method === "GET" || input.method === "HEAD")) {
        throw new ToolError("tool.bad-request", `a ${input.method} request cannot have a body`, {
          hint: "Use POST, PUT or PATCH to send a body, or leave `body` out",
        });
      }
      const headers = new Headers();
      try {
        for (const [name, value] of Object.entries(input.headers ?? {})) headers.set(name, value);
      } catch (error) {
        throw new ToolError("tool.bad-request", "a request header has an invalid name or value", {
          cause: error,
          hint: "Use header names of letters, digits and `-`, and values without line breaks",
        });
      }
      if (headers.has("host")) {
        throw new ToolError("tool.bad-request", "the `host` header cannot be set", {
          hint: "Leave it out: it is taken from the URL",
        });
      }
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout(limits.fetchTimeoutMs)]);
      let method: string = input.method;
      let body = input.body;
      const redirects: string[] = [];
      try {
        for (;;) {
          const response = await fetch(url, { method, headers, body, redirect: "manual", signal });
          const location = response.headers.get("location");
          if (isRedirect(response.status) && location !== null) {
            await response.body?.cancel().catch(() => undefined);
            if (redirects.length >= MAX_REDIRECTS) {
              throw new ToolError(
                "tool.too-many-redirects",
                `${input.url} redirected more than ${MAX_REDIRECTS} times (last to ${url.href})`,
                { hint: "Fetch the final URL directly, or check for a redirect loop" },
              );
            }
            const next = checkUrl(location, url, rules);
            const downgrade =
              response.status === 303 || (response.status < 303 && method === "POST");
            if (downgrade && method !== "HEAD") {
              method = "GET";
              body = undefined;
              headers.delete("content-type");
              headers.delete("content-length");
            }
            if (next.origin !== url.origin)
              for (const name of CREDENTIAL_HEADERS) headers.delete(name);
            redirects.push(next.href);
            url = next;
            continue;
          }
          const kept: Record<string, string> = {};
          for (const name of KEPT_HEADERS) {
            const value = response.headers.get(name);
            if (value !== null) kept[name] = value;
          }
          const { bytes, truncated } = await readCapped(response, limits.fetchBytes);
          const contentType = response.headers.get("content-type");
          const binary =
            BINARY_TYPES.test(contentType ?? "") || bytes.subarray(0, SNIFF_BYTES).includes(0);
          const end =
            bytes.length > limits.fetchBytes
              ? utf8Boundary(bytes, limits.fetchBytes)
              : bytes.length;
          return {
            url: url.href,
            status: response.status,
            statusText: response.statusText,
            headers: kept,
            body: binary ? "" : decoderFor(contentType).decode(bytes.subarray(0, end)),
            truncated,
            binary,
            redirects,
          };
        }
      } catch (error) {
        throw failure(error, url, context.signal, limits.fetchTimeoutMs);
      }
    },
  });
}
