import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_THUMBNAIL,
  decodeThumbnail,
  readImageHeader,
} from "../frames/index.js";
import type { EventStore } from "../log/index.js";
import { artifactHash, type SpoolEvent } from "../spec/index.js";
import { requireExisting, requireRole } from "./access-control.js";
import { continuityId, paramOf, queryOf, readOnlyQuery, seqParam } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";

/** The most bytes one uploaded frame may have (the frame sources' own limit, 8 MiB). */
export const MAX_FRAME_UPLOAD_BYTES = DEFAULT_MAX_FRAME_BYTES;

/** The content types a frame upload may declare. */
const FRAME_TYPES = new Set(["image/jpeg", "image/png", "image/webp", "application/octet-stream"]);

const uploadQuery = z.strictObject({
  /** Capture time, epoch milliseconds (default: when the server took it). */
  at: seqParam.optional(),
});

/** The watch events that name a frame (`data.frame`), newest last in the log. */
const FRAME_EVENTS = [
  "note.added",
  "note.skipped",
  "commentary.added",
  "commentary.skipped",
  "watch.failed",
] as const;

/**
 * Frames over HTTP: `POST …/frames` (writers) pushes an image into the continuity's push frame
 * source (an agent whose manifest says `watch: { source: { push: true } }`; the continuity is
 * taken up first, as a turn would take it up); `GET …/frames/latest` (readers) answers the newest
 * frame's image (the running watch's latest frame, else the newest frame a watch event names);
 * `GET …/artifacts/:hash` (readers) answers a frame's image by hash, for a hash this continuity's
 * watch events (or `artifact.stored` events) name: an artifact of another continuity is 404.
 *
 * An upload is checked before it is pushed: over `MAX_FRAME_UPLOAD_BYTES` is 413
 * `frame.too-large`, an empty body 400 `frame.empty`, a content type other than an image 415
 * `frame.unsupported-type`, bytes that are no JPEG, PNG or WebP 422 `frame.unsupported`, and an
 * image that does not decode (truncated, corrupt) 422 `frame.undecodable`. Never a 500.
 */
export function frameRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, rosters, host } = services;
  const app = new Hono<ServerEnv>();

  app.post("/:id/frames", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "writer", rosters);
    await requireExisting(store, id);
    const { at } = queryOf(c, uploadQuery);
    const data = await frameBody(c);
    const running = await (await host.session(id)).watch;
    if (!running?.push) {
      throw new ServerError(
        409,
        "frames.no-push-source",
        `continuity "${id}" has no stream watch that takes pushed frames`,
        { hint: "Give its agent manifest watch: { source: { push: true } }" },
      );
    }
    const result = running.push.pushFrame({ data, ...(at !== undefined ? { at } : {}) });
    if (!result.accepted) throw refused(result.reason);
    return c.json(
      {
        accepted: true,
        source: running.push.source,
        bytes: data.length,
        dropped: running.push.dropped,
      },
      202,
    );
  });

  app.get("/:id/frames/latest", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    queryOf(c, readOnlyQuery);
    const running = await (await host.runningSession(id))?.watch;
    const live = running?.frames.latest();
    if (live) {
      const { frame } = live;
      return image(c, live.data, frame.mime, {
        hash: frame.hash,
        at: frame.at,
        source: frame.source,
        width: frame.width,
        height: frame.height,
      });
    }
    const logged = await newestFrame(store, id);
    if (!logged || !(await store.artifacts.has(logged.hash))) {
      throw new ServerError(404, "frame.none", `continuity "${id}" has no frame yet`, {
        hint: "Frames come from its agent's stream watch (POST …/frames for a push source)",
      });
    }
    const info = await store.artifacts.stat(logged.hash);
    return image(c, await store.artifacts.get(logged.hash), info?.mediaType, logged);
  });

  app.get("/:id/artifacts/:hash", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    queryOf(c, readOnlyQuery);
    const hash = paramOf(c, "hash", artifactHash);
    if (!(await namedBy(store, id, hash)) || !(await store.artifacts.has(hash))) {
      throw new ServerError(
        404,
        "artifact.not-found",
        `continuity "${id}" names no artifact ${hash.slice(0, 12)}…`,
        { hint: "Ask for a hash one of its events names (a frame's data.frame.hash)" },
      );
    }
    const info = await store.artifacts.stat(hash);
    const data = await store.artifacts.get(hash);
    return image(c, data, info?.mediaType, { hash }, "private, max-age=31536000, immutable");
  });

  return app;
}

/** The upload's bytes, checked (see `frameRoutes`). */
async function frameBody(c: Context<ServerEnv>): Promise<Buffer> {
  const type = (c.req.header("Content-Type") ?? "application/octet-stream")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (!FRAME_TYPES.has(type)) {
    throw new ServerError(
      415,
      "frame.unsupported-type",
      `a frame is sent as image/jpeg, image/png or image/webp, not ${type.slice(0, 100)}`,
    );
  }
  const data = Buffer.from(await c.req.arrayBuffer());
  if (data.length === 0) throw refused("empty");
  if (data.length > MAX_FRAME_UPLOAD_BYTES) throw refused("too-big");
  if (!readImageHeader(data)) throw refused("unsupported");
  try {
    await decodeThumbnail(data, DEFAULT_THUMBNAIL);
  } catch (error) {
    throw new ServerError(
      422,
      "frame.undecodable",
      error instanceof Error ? error.message : "the image does not decode",
    );
  }
  return data;
}

/** The error for a frame refused as `reason`. */
function refused(reason: "too-big" | "empty" | "unsupported" | "ended"): ServerError {
  switch (reason) {
    case "too-big":
      return frameTooLarge();
    case "empty":
      return new ServerError(400, "frame.empty", "the frame is empty: send the image's bytes");
    case "unsupported":
      return new ServerError(
        422,
        "frame.unsupported",
        "the body is not a JPEG, PNG or WebP image",
        { hint: "Send the encoded image's bytes as they are" },
      );
    default:
      return new ServerError(
        409,
        "frames.ended",
        "the stream watch's push source has ended (its session is closing)",
      );
  }
}

/** 413 for a frame over `MAX_FRAME_UPLOAD_BYTES`. */
export function frameTooLarge(): ServerError {
  return new ServerError(
    413,
    "frame.too-large",
    `a frame may have at most ${MAX_FRAME_UPLOAD_BYTES} bytes`,
    { hint: "Send a smaller image (lower resolution or JPEG quality)" },
  );
}

interface FrameFacts {
  hash: string;
  at?: number;
  source?: string;
  width?: number;
  height?: number;
}

/** An image answer: its type, the frame's facts as `X-Frame-*` headers, no sniffing. */
function image(
  c: Context,
  data: Buffer,
  mime: string | undefined,
  facts: FrameFacts,
  cache = "no-store",
): Response {
  c.header("Content-Type", mime ?? readImageHeader(data)?.mime ?? "application/octet-stream");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cache-Control", cache);
  c.header("X-Frame-Hash", facts.hash);
  if (facts.at !== undefined) c.header("X-Frame-At", String(facts.at));
  if (facts.source !== undefined) c.header("X-Frame-Source", encodeURIComponent(facts.source));
  if (facts.width !== undefined && facts.height !== undefined) {
    c.header("X-Frame-Size", `${facts.width}x${facts.height}`);
  }
  return c.body(new Uint8Array(data), 200);
}

function frameOf(event: SpoolEvent): FrameFacts | undefined {
  const frame = (event.data as { frame?: FrameFacts }).frame;
  return frame && typeof frame.hash === "string" ? frame : undefined;
}

/** The newest frame a watch event of `continuity` names. */
async function newestFrame(store: EventStore, continuity: string): Promise<FrameFacts | undefined> {
  let newest: FrameFacts | undefined;
  for await (const event of store.read({ continuity, types: FRAME_EVENTS })) {
    newest = frameOf(event) ?? newest;
  }
  return newest;
}

/** Whether an event of `continuity` names artifact `hash` (a frame, or `artifact.stored`). */
async function namedBy(store: EventStore, continuity: string, hash: string): Promise<boolean> {
  for await (const event of store.read({
    continuity,
    types: [...FRAME_EVENTS, "artifact.stored"],
  })) {
    const named = frameOf(event)?.hash ?? (event.data as { hash?: unknown }).hash;
    if (named === hash) return true;
  }
  return false;
}
