import type { SpoolEvent } from "../../../src/spec/index.js";

/** One source of a continuity, as its events leave it. */
export interface SourceInfo {
  id: string;
  kind: string;
  target: string;
  status: "added" | "running" | "paused" | "exhausted" | "failed" | "removed";
  /** Its newest cursor (after its last chunk, or where it rotated or ended), as text. */
  cursor?: string;
  /** Chunks read (the last `n`). */
  chunks: number;
  /** Chunks delivered to the conversation (the last delivery turn's `to_chunk`). */
  delivered: number;
  lines: number;
  bytes: number;
  lastChunkAt?: string;
  error?: string;
  rotations: number;
}

/**
 * Folds `source.*` events and delivery turns into each source's state: its cursor, what it read,
 * what the conversation has been given, and its lag (chunks read and not yet delivered). Never
 * throws.
 */
export class SourcesFold {
  readonly sources = new Map<string, SourceInfo>();

  push(event: SpoolEvent): void {
    const data = event.data as Record<string, unknown>;
    if (event.type === "turn.added" && Array.isArray(data.sources)) {
      for (const delivery of data.sources as { source_id: string; to_chunk: number }[]) {
        const source = this.sources.get(delivery.source_id);
        if (source) source.delivered = Math.max(source.delivered, delivery.to_chunk);
      }
      return;
    }
    if (!event.type.startsWith("source.")) return;
    const id = String(data.source_id ?? "");
    let source = this.sources.get(id);
    if (!source) {
      source = {
        id,
        kind: "?",
        target: "",
        status: "added",
        chunks: 0,
        delivered: 0,
        lines: 0,
        bytes: 0,
        rotations: 0,
      };
      this.sources.set(id, source);
    }
    const cursor = cursorText(data.cursor);
    if (cursor !== undefined) source.cursor = cursor;
    switch (event.type) {
      case "source.added": {
        const definition = (data.definition ?? {}) as Record<string, unknown>;
        source.kind = String(definition.kind ?? source.kind);
        source.status = "added";
        return;
      }
      case "source.started":
        source.kind = String(data.kind ?? source.kind);
        source.target = String(data.target ?? "");
        source.status = "running";
        source.error = undefined;
        return;
      case "source.chunk":
        source.chunks = Number(data.n ?? source.chunks);
        source.lines += Number(data.line_count ?? 0);
        source.bytes += Number(data.bytes ?? 0);
        source.lastChunkAt = event.ts;
        return;
      case "source.rotated":
        source.rotations += 1;
        return;
      case "source.paused":
        source.status = "paused";
        return;
      case "source.resumed":
        source.status = "running";
        return;
      case "source.exhausted":
        source.status = "exhausted";
        return;
      case "source.failed": {
        const error = data.error as { message?: string } | undefined;
        source.error = error?.message;
        if (data.final) source.status = "failed";
        return;
      }
      case "source.removed":
        source.status = "removed";
        return;
    }
  }
}

/**
 * A cursor as the table shows it, in a few characters (as `spool sources` does): a file's offset
 * (`@12,480`), a dataset's file and offset, an SSE stream's last id; any other adapter's cursor
 * as compact JSON, at most 60 characters.
 */
function cursorText(cursor: unknown): string | undefined {
  if (typeof cursor === "string") return cursor;
  if (cursor === null || typeof cursor !== "object") return undefined;
  const fields = cursor as Record<string, unknown>;
  if (typeof fields.offset === "number") {
    const at = `@${fields.offset.toLocaleString("en-US")}`;
    return typeof fields.file === "string" ? `${fields.file} ${at}` : at;
  }
  if (typeof fields.last_event_id === "string") return `id ${fields.last_event_id}`;
  const text = JSON.stringify(cursor);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
