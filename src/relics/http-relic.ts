import { z } from "zod";
import { describeError } from "../spec/index.js";
import { type HostRule, isHostAllowed, parseAllowHosts } from "../tools/index.js";
import { decodeBody, readLimited, resolveRequestUrl } from "./http-target.js";
import type { Relic, RelicDescription } from "./relic.js";
import { RelicError } from "./relic-error.js";

/** Options of `createHttpRelic`. */
export interface HttpRelicOptions {
  /** The relic's name (default `http`). */
  name?: string;
  /** Where relative paths go: `https://api.example.com/v1`. Its host is always allowed. */
  baseUrl: string;
  /** Further hosts requests may reach (`host`, `host:port` or `*.domain`); see `isHostAllowed`. */
  allowedHosts?: readonly string[];
  /** Headers sent with every request (credentials, say); a request's own headers override them. Never logged. */
  headers?: Readonly<Record<string, string>>;
  /** Longest a request may take unless it asks for less (default 30 s). */
  timeoutMs?: number;
  /** Largest response body read (default 1 MiB). */
  maxResponseBytes?: number;
  /** Redirects followed, each checked against the allowed hosts (default 5). */
  maxRedirects?: number;
  /** Injected for tests (default the global `fetch`). */
  fetch?: typeof fetch;
}

const configSchema = z.strictObject({
  name: z.string().optional(),
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
  allowedHosts: z
    .array(
      z
        .string()
        .regex(
          /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/,
          "must be a host, host:port or *.domain",
        ),
    )
    .optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxResponseBytes: z.number().int().positive().optional(),
  maxRedirects: z.number().int().nonnegative().max(20).optional(),
  fetch: z.custom<typeof fetch>((value) => typeof value === "function").optional(),
});

const requestParameters = z.strictObject({
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
  path: z.string().min(1).max(8192),
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.json().optional(),
  timeout_ms: z.number().int().positive().max(600_000).optional(),
});

type RequestParameters = z.output<typeof requestParameters>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * An HTTP service relic: one base URL, an allow-list of hosts, and one method, `request`
 * (`method`, `path`, `query`, `headers`, `body`, `timeout_ms`), which returns
 * `{ status, ok, url, headers, body, encoding }` for every HTTP status (a 404 is an answer,
 * not an error).
 *
 * Contract: `start` checks the configuration and rejects (`relic.http.config`) on a bad base URL
 * or host entry. A request to a host not allowed, directly or through a redirect, is refused
 * with `relic.http.host-not-allowed` before anything is sent there. A request ends when it
 * answers, when the call's signal aborts (`relic.http.aborted`), when its timeout passes
 * (`relic.http.timeout`), or when the relic stops (`relic.http.stopped`): `stop` aborts every
 * request in flight and waits for them to settle. Network failures are `relic.http.unreachable`
 * (retryable). A string body is sent as is; any other JSON body as `application/json`.
 */
export function createHttpRelic(options: HttpRelicOptions): Relic {
  const name = options.name ?? "http";
  const description: RelicDescription = {
    description: `HTTP requests to ${options.baseUrl} and its allowed hosts.`,
    methods: {
      request: {
        description:
          "Sends an HTTP request; a relative path is appended to the base URL. Returns { status, ok, url, headers, body, encoding }.",
        parameters: requestParameters,
      },
    },
  };
  let running:
    | { base: URL; allowed: string[]; rules: HostRule[]; stop: AbortController }
    | undefined;
  const inFlight = new Set<Promise<unknown>>();

  const request = async (parameters: RequestParameters, signal: AbortSignal) => {
    const current = running;
    if (!current) throw new RelicError("relic.http.stopped", `relic "${name}" is not running`);
    if (
      parameters.body !== undefined &&
      (parameters.method === "GET" || parameters.method === "HEAD")
    ) {
      throw new RelicError("relic.http.bad-request", `a ${parameters.method} request has no body`, {
        hint: "Use POST, PUT or PATCH to send a body",
      });
    }
    let url = resolveRequestUrl(current.base, parameters.path, parameters.query);
    const timeoutMs = parameters.timeout_ms ?? options.timeoutMs ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = AbortSignal.any([signal, current.stop.signal, timeout]);
    const headers = new Headers({ ...options.headers, ...parameters.headers });
    let body: string | undefined;
    if (typeof parameters.body === "string") body = parameters.body;
    else if (parameters.body !== undefined) {
      body = JSON.stringify(parameters.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    let method: string = parameters.method;
    const doFetch = options.fetch ?? fetch;
    for (let redirects = 0; ; redirects++) {
      if (!isHostAllowed(current.rules, url)) {
        throw new RelicError(
          "relic.http.host-not-allowed",
          `host "${url.host}" is not allowed for relic "${name}"${redirects ? " (reached through a redirect)" : ""}`,
          { hint: `Use a path on ${current.base.host} or one of: ${current.allowed.join(", ")}` },
        );
      }
      let response: Response;
      try {
        response = await doFetch(url, {
          method,
          headers,
          body,
          signal: combined,
          redirect: "manual",
        });
      } catch (error) {
        throw abortError(error, { signal, stop: current.stop.signal, timeout, timeoutMs, url });
      }
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects >= (options.maxRedirects ?? 5)) {
          throw new RelicError("relic.http.too-many-redirects", `${url.href} redirected too often`);
        }
        url = new URL(location, url);
        if (
          response.status === 303 ||
          (response.status !== 307 && response.status !== 308 && method === "POST")
        ) {
          method = "GET";
          body = undefined;
          headers.delete("content-type");
        }
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = await readLimited(response, options.maxResponseBytes ?? 1024 * 1024);
      } catch (error) {
        if (error instanceof RelicError) throw error;
        throw abortError(error, { signal, stop: current.stop.signal, timeout, timeoutMs, url });
      }
      const decoded = decodeBody(bytes, response.headers.get("content-type") ?? "");
      return {
        status: response.status,
        ok: response.ok,
        url: url.href,
        headers: Object.fromEntries(response.headers),
        ...decoded,
      };
    }
  };

  return {
    name,
    describe: () => description,
    async start() {
      const parsed = configSchema.safeParse(options);
      if (!parsed.success) {
        const issues = parsed.error.issues
          .map((issue) => `${issue.path.join(".") || "(options)"}: ${issue.message}`)
          .join("; ");
        throw new RelicError("relic.http.config", `relic "${name}" is misconfigured: ${issues}`, {
          hint: "Fix the relic's configuration",
        });
      }
      const base = new URL(parsed.data.baseUrl);
      const allowed = [base.host, ...(parsed.data.allowedHosts ?? [])];
      let rules: HostRule[];
      try {
        rules = parseAllowHosts(allowed, `relic "${name}" allowedHosts`);
      } catch (error) {
        throw new RelicError("relic.http.config", describeError(error), {
          hint: "Write hosts as `api.example.com`, `*.example.com` or `127.0.0.1:8080`",
        });
      }
      running = { base, allowed, rules, stop: new AbortController() };
    },
    async call(method, parameters, signal) {
      if (method !== "request") {
        throw new RelicError("relic.unknown-method", `relic "${name}" has no method "${method}"`);
      }
      const pending = request(parameters as RequestParameters, signal);
      inFlight.add(pending);
      try {
        return await pending;
      } finally {
        inFlight.delete(pending);
      }
    },
    async stop() {
      running?.stop.abort(new RelicError("relic.http.stopped", `relic "${name}" stopped`));
      running = undefined;
      await Promise.allSettled([...inFlight]);
    },
  };
}

function abortError(
  error: unknown,
  context: {
    signal: AbortSignal;
    stop: AbortSignal;
    timeout: AbortSignal;
    timeoutMs: number;
    url: URL;
  },
): RelicError {
  const where = `${context.url.origin}${context.url.pathname}`;
  if (context.stop.aborted) {
    return new RelicError(
      "relic.http.stopped",
      `the request to ${where} was abandoned: the relic stopped`,
    );
  }
  if (context.signal.aborted) {
    return new RelicError("relic.http.aborted", `the request to ${where} was aborted`, {
      retryable: true,
      cause: context.signal.reason,
    });
  }
  if (context.timeout.aborted) {
    return new RelicError(
      "relic.http.timeout",
      `the request to ${where} took longer than ${context.timeoutMs} ms`,
      { retryable: true, hint: "Try again, or pass a larger timeout_ms" },
    );
  }
  return new RelicError(
    "relic.http.unreachable",
    `the request to ${where} failed: ${describeError(error)}`,
    {
      retryable: true,
      cause: error,
    },
  );
}
