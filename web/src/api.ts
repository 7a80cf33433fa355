/**
 * Everything the dashboard asks of `spool serve`, in one place: the routes, the bearer token, and
 * the decoding of the server's `{ error: { code, message } }` answers. A route that moves on the
 * server changes here and nowhere else.
 */
import { EventSource } from "eventsource";
import type { SpoolEvent } from "../../src/spec/index.js";

export type { SpoolEvent };

/** Where the token the user entered is kept between visits (never shown again, never logged). */
const TOKEN_KEY = "spool.token";

const API = "/api";
const continuityPath = (id: string) => `${API}/continuities/${encodeURIComponent(id)}`;

/** The API's paths, relative to the page's origin. */
const ROUTES = {
  continuities: () => `${API}/continuities`,
  events: (id: string) => `${continuityPath(id)}/events`,
  live: (id: string) => `${continuityPath(id)}/events/live`,
  turns: (id: string) => `${continuityPath(id)}/turns`,
  cancel: (id: string) => `${continuityPath(id)}/cancel`,
  context: (id: string, step: string) =>
    `${continuityPath(id)}/context?step=${encodeURIComponent(step)}`,
  watchSettings: (id: string) => `${continuityPath(id)}/watch/settings`,
  sourceChange: (id: string, source: string, change: "pause" | "resume") =>
    `${continuityPath(id)}/sources/${encodeURIComponent(source)}/${change}`,
  artifact: (id: string, hash: string) =>
    `${continuityPath(id)}/artifacts/${encodeURIComponent(hash)}`,
} as const;

/** A refusal or failure of the server, as its JSON error body says (or the HTTP status). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The token stored for this origin, or `""`. */
export function storedToken(): string {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? "";
  } catch {
    return "";
  }
}

/** Stores `token` for later visits (an empty one forgets it). */
export function storeToken(token: string): void {
  try {
    if (token === "") localStorage.removeItem(TOKEN_KEY);
    else localStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode): the token lasts for this page only.
  }
  sessionToken = token;
}

let sessionToken = storedToken();

function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return sessionToken === "" ? extra : { ...extra, authorization: `Bearer ${sessionToken}` };
}

/** The `ApiError` a failed response stands for: its JSON `{ error }` body, else its status. */
async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = body.error ?? {};
    if (typeof message === "string") {
      return new ApiError(response.status, typeof code === "string" ? code : "error", message);
    }
  } catch {
    // Not JSON: fall through to the status line.
  }
  const detail = text.trim().slice(0, 300);
  return new ApiError(
    response.status,
    `http.${response.status}`,
    `${response.status} ${response.statusText}${detail ? `: ${detail}` : ""}`,
  );
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: authHeaders(body === undefined ? {} : { "content-type": "application/json" }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new ApiError(0, "network", `the server did not answer: ${String(error)}`);
  }
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** One continuity as the list shows it. */
export interface ContinuitySummary {
  id: string;
  title: string | null;
  /** The agent manifest its turns run. */
  agent: string | null;
  /** How many events it holds. */
  events: number;
  created_at: string;
  last_at: string;
  /** The seq of its newest event. */
  last_seq: number;
  /** The role the token holds in it. */
  role: string;
}

/** Lists the continuities the token may read. */
export async function listContinuities(): Promise<ContinuitySummary[]> {
  const body = await request<{ continuities: ContinuitySummary[] }>("GET", ROUTES.continuities());
  return body.continuities;
}

/** One page of a continuity's events after `after` (a seq), oldest first. */
export interface EventPage {
  events: SpoolEvent[];
  /** Where the next page starts, or `null` when this one reached the head. */
  next: { after: number } | null;
}

/** Reads up to `limit` events of `continuity` with a seq above `after`. */
export async function readEvents(
  continuity: string,
  after: number,
  limit = 1000,
): Promise<EventPage> {
  const query = new URLSearchParams({ after: String(after), limit: String(limit) });
  return request<EventPage>("GET", `${ROUTES.events(continuity)}?${query}`);
}

/** What a live subscription reports besides events. */
export interface LiveHandlers {
  event(event: SpoolEvent): void;
  /** The stream caught up with the log (its `up-to-date` message): what follows is live. */
  live(): void;
  /** The connection dropped or was refused; it retries on its own unless `fatal`. */
  error(error: ApiError, fatal: boolean): void;
}

/**
 * Follows `continuity` live from after `after` over SSE (`id:` = seq). A dropped connection
 * reconnects with `Last-Event-ID` so nothing is missed or repeated; the token goes in the
 * `Authorization` header (the `eventsource` client lets fetch carry it). Returns the closer.
 */
export function followEvents(continuity: string, after: number, on: LiveHandlers): () => void {
  const url = `${ROUTES.live(continuity)}?after=${after}`;
  const source = new EventSource(new URL(url, location.href).href, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers ?? {}), ...authHeaders() } }),
  });
  const deliver = (message: MessageEvent<string>) => {
    try {
      on.event(JSON.parse(message.data) as SpoolEvent);
    } catch {
      on.error(
        new ApiError(0, "live.bad-frame", "the live stream sent a frame that is not JSON"),
        false,
      );
    }
  };
  source.addEventListener("message", deliver);
  source.addEventListener("up-to-date", () => on.live());
  source.addEventListener("error", (event) => {
    const sent = (event as Event & { data?: unknown }).data;
    if (typeof sent === "string") {
      // The server ended the stream itself (`event: error`): a revoked or narrowed token.
      source.close();
      on.error(serverStreamError(sent), true);
      return;
    }
    const { code, message } = event as Event & { code?: number; message?: string };
    const fatal = source.readyState === EventSource.CLOSED;
    const status = typeof code === "number" ? code : 0;
    const text =
      status === 401 || status === 403
        ? "the server refused the token for the live stream"
        : (message ?? "the live stream was interrupted");
    on.error(new ApiError(status, "live.error", text), fatal);
  });
  return () => source.close();
}

function serverStreamError(data: string): ApiError {
  try {
    const { code, message } = JSON.parse(data) as { code?: string; message?: string };
    return new ApiError(403, code ?? "live.ended", message ?? "the server ended the live stream");
  } catch {
    return new ApiError(0, "live.ended", "the server ended the live stream");
  }
}

/** Adds a turn (the user's message) to `continuity`. */
export function addTurn(continuity: string, text: string): Promise<unknown> {
  return request("POST", ROUTES.turns(continuity), { text });
}

/** Asks the runtime to stop the run in progress. */
export function cancelRun(continuity: string): Promise<unknown> {
  return request("POST", ROUTES.cancel(continuity), {});
}

/** A model step's compiled context, as `spool context` reports it. */
export interface ContextReport {
  step: string;
  thread: string;
  index: number;
  model: string | null;
  seq: number;
  ts: string;
  compiled: {
    strategy: string;
    messages: number;
    omitted: number;
    tokens: number;
    budget: number;
    digest: string;
    parts?: Record<string, number>;
    ranges?: { thread: string; from_seq: number; to_seq: number }[];
    over_budget?: boolean;
    [field: string]: unknown;
  };
  summaries: {
    id: string;
    summarizer: string | null;
    tokens: number | null;
    covers: { thread: string; from_seq: number; to_seq: number } | null;
  }[];
  pinned: { id: string; kind: string | null; text: string | null }[];
}

/** The compiled context of `step` (`<thread>:<n>`). */
export async function readContext(continuity: string, step: string): Promise<ContextReport> {
  const body = await request<{ context?: ContextReport } & Partial<ContextReport>>(
    "GET",
    ROUTES.context(continuity, step),
  );
  return (body.context ?? body) as ContextReport;
}

/** The stream-watch settings in force, by name. */
export type WatchSettings = Record<string, string | number | boolean>;

/**
 * Pauses or resumes one of the continuity's sources (a writer's change; the log then shows it as
 * `source.paused` / `source.resumed`).
 */
export function changeSource(
  continuity: string,
  source: string,
  change: "pause" | "resume",
): Promise<unknown> {
  return request("POST", ROUTES.sourceChange(continuity, source, change), {});
}

/** The continuity's stream-watch settings. */
export async function readWatchSettings(continuity: string): Promise<WatchSettings> {
  const body = await request<{ settings: WatchSettings }>("GET", ROUTES.watchSettings(continuity));
  return body.settings;
}

/**
 * Changes stream-watch settings (only those in `changes`); the server validates them and answers
 * the settings now in force, or refuses with a message naming the setting and its range.
 */
export async function writeWatchSettings(
  continuity: string,
  changes: WatchSettings,
): Promise<WatchSettings> {
  const body = await request<{ settings: WatchSettings }>(
    "PUT",
    ROUTES.watchSettings(continuity),
    changes,
  );
  return body.settings;
}

/**
 * An artifact's bytes as an object URL (for an `<img>`): fetched with the token in its header,
 * never in the URL. Revoke it with `URL.revokeObjectURL` when it is no longer shown.
 */
export async function artifactObjectUrl(continuity: string, hash: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(ROUTES.artifact(continuity, hash), { headers: authHeaders() });
  } catch (error) {
    throw new ApiError(0, "network", `the server did not answer: ${String(error)}`);
  }
  if (!response.ok) throw await errorOf(response);
  return URL.createObjectURL(await response.blob());
}
