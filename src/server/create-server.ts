import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { EventStore } from "../log/index.js";
import { ActorRosters } from "../runtime/index.js";
import { AccessTokens } from "./access-tokens.js";
import type { AgentHost } from "./agent-host.js";
import { chatRoutes } from "./chat-routes.js";
import { continuityRoutes } from "./continuity-routes.js";
import { type DashboardAssetsOptions, dashboardAssets } from "./dashboard-assets.js";
import { frameRoutes, frameTooLarge, MAX_FRAME_UPLOAD_BYTES } from "./frame-routes.js";
import { LiveHub } from "./live-hub.js";
import { logRoutes } from "./log-routes.js";
import { openaiRoutes } from "./openai-routes.js";
import { type RateLimitOptions, TokenBuckets } from "./rate-limit.js";
import { MAX_BODY_BYTES } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { errorAnswer, errorResponse, ServerError } from "./server-error.js";
import { sourceRoutes } from "./source-routes.js";
import { turnRoutes } from "./turn-routes.js";
import { watchRoutes } from "./watch-routes.js";

/** The frame upload route, whose bodies may be larger than others'. */
const FRAME_UPLOAD = /^\/api\/continuities\/[^/]+\/frames\/?$/;

/** Routes another module mounts under `/api` (behind the same auth, limits and errors). */
export interface MountedRoutes {
  /** Where, below `/api`: `/frames`, … */
  path: string;
  routes: (services: ServerServices) => Hono<ServerEnv>;
}

/** What `createServer` builds the API from. */
export interface ServerDeps {
  store: EventStore;
  /** The agents that answer turns. */
  host: AgentHost;
  /** The token records (default: read from `store`). */
  tokens?: AccessTokens;
  /** Origins allowed to call the API from a browser; none (the default) sends no CORS headers. */
  cors?: readonly string[];
  /** The per-token rate limit (default 60 at once, 10 per second after). */
  rateLimit?: RateLimitOptions;
  /** Milliseconds between SSE heartbeats (default 15 000). */
  heartbeatMs?: number;
  /**
   * Events an SSE connection may have waiting (default 1,000): one that falls further behind is
   * disconnected and resumes by `Last-Event-ID`.
   */
  liveBuffer?: number;
  /** The live-event hub (default: a new one over `store`, with `liveBuffer`). */
  live?: LiveHub;
  /** More routes, mounted under `/api` behind the same auth, limits and errors (an embedder's own). */
  mounts?: readonly MountedRoutes[];
  /** Hears every error answered with a 500, for the operator's log (never sent to clients). */
  onInternalError?: (error: unknown) => void;
  /** The dashboard's files (`dashboardAssets`: default `dist/web/`); `false` serves none. */
  dashboard?: DashboardAssetsOptions | false;
}

/**
 * The Spool HTTP API as a Hono app (`app.fetch`, `app.request` in tests, `serve` to listen):
 * continuities, turns, events by page and live over SSE, runs, threads, a step's context, pins,
 * sources (read and changed), stream-watch settings, frames and their images, the turn policy and access lists, broadcast, the AI SDK chat routes and the
 * OpenAI-compatible routes. See docs/http-api.md.
 *
 * Guarantees: every route but `GET /healthz` needs a live bearer token (`Authorization: Bearer`,
 * or `access_token` in the query of a GET, for browsers' EventSource), checked against the log at
 * each request, so a revoked token is refused at once; each token is rate limited (429 with
 * `Retry-After`); every body and query is checked by a zod schema; every error is a JSON
 * `{error: {code, message}}` with no stack trace, and bad input is a 4xx, never a 500.
 */
export function createServer(deps: ServerDeps): Hono {
  const tokens = deps.tokens ?? new AccessTokens(deps.store);
  const services: ServerServices = {
    store: deps.store,
    host: deps.host,
    tokens,
    rosters: new ActorRosters(deps.store),
    heartbeatMs: deps.heartbeatMs ?? 15_000,
    live:
      deps.live ??
      new LiveHub(deps.store, deps.liveBuffer !== undefined ? { buffer: deps.liveBuffer } : {}),
  };
  const app = new Hono<ServerEnv>();
  app.onError((error, c) => {
    if (errorAnswer(error).status === 500) deps.onInternalError?.(error);
    return errorResponse(c, error);
  });
  app.notFound((c) =>
    c.json(
      { error: { code: "route.not-found", message: `no route ${c.req.method} ${c.req.path}` } },
      404,
    ),
  );
  if (deps.cors && deps.cors.length > 0) {
    app.use(
      "*",
      cors({
        origin: [...deps.cors],
        allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID"],
        allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
        exposeHeaders: ["Retry-After", "x-vercel-ai-ui-message-stream"],
        maxAge: 600,
      }),
    );
  }
  app.get("/healthz", (c) => c.json({ ok: true }));
  const guard = authenticate(tokens, new TokenBuckets(deps.rateLimit));
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ServerError(413, "request.too-large", `the body is over ${MAX_BODY_BYTES} bytes`);
    },
  });
  const frameLimit = bodyLimit({
    maxSize: MAX_FRAME_UPLOAD_BYTES,
    onError: () => {
      throw frameTooLarge();
    },
  });
  // A frame upload may be as large as a frame source takes; every other body, 1 MiB.
  const limits: MiddlewareHandler<ServerEnv> = (c, next) =>
    (c.req.method === "POST" && FRAME_UPLOAD.test(c.req.path) ? frameLimit : limit)(c, next);
  for (const prefix of ["/api/*", "/v1/*"]) {
    app.use(prefix, guard);
    app.use(prefix, limits);
  }
  app.get("/api/me", (c) => {
    const { id, actor, role, scope, label } = c.get("token");
    return c.json({ token: { id, actor, role, scope: scope ?? null, label: label ?? null } });
  });
  app.route("/api/continuities", continuityRoutes(services));
  app.route("/api/continuities", logRoutes(services));
  app.route("/api/continuities", sourceRoutes(services));
  app.route("/api/continuities", watchRoutes(services));
  app.route("/api/continuities", frameRoutes(services));
  app.route("/api", turnRoutes(services));
  app.route("/api/chat", chatRoutes(services));
  app.route("/v1", openaiRoutes(services));
  for (const mount of deps.mounts ?? []) app.route(`/api${mount.path}`, mount.routes(services));
  if (deps.dashboard !== false) app.on(["GET", "HEAD"], "*", dashboardAssets(deps.dashboard));
  return app as unknown as Hono;
}

/** The bearer-token check and the per-token rate limit, in front of every API route. */
function authenticate(tokens: AccessTokens, buckets: TokenBuckets): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const header = c.req.header("Authorization");
    let secret: string | undefined;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S{1,200})\s*$/i.exec(header);
      if (!match)
        throw unauthorized("auth.bad-header", "the Authorization header is not `Bearer <token>`");
      secret = match[1];
    } else if (c.req.method === "GET") {
      const query = c.req.query("access_token");
      if (query !== undefined && query.length <= 200) secret = query;
    }
    if (secret === undefined) {
      throw unauthorized(
        "auth.missing-token",
        "this route needs a token: send Authorization: Bearer <token>",
      );
    }
    const token = await tokens.authenticate(secret);
    if (!token) throw unauthorized("auth.invalid-token", "the token is not known or was revoked");
    const decision = buckets.take(token.id);
    if (!decision.ok) {
      throw new ServerError(429, "rate.limited", "too many requests with this token", {
        hint: `Wait ${decision.retryAfter} s`,
        retryAfter: decision.retryAfter,
      });
    }
    c.set("token", token);
    await next();
  };
}

function unauthorized(code: string, message: string): ServerError {
  return new ServerError(401, code, message, {
    hint: "Create a token with `spool tokens create --actor NAME --role reader|writer|owner`",
  });
}
