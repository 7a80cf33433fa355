import { z } from "zod";
import type { WatchSettingIssue } from "./watch-settings.js";

/** Where an agent's stream watch takes its frames from (`watch: { source: … }` in its manifest). */
export type WatchSourceConfig =
  | {
      readonly kind: "video";
      readonly input: string;
      readonly fps?: number;
      readonly live?: boolean;
    }
  | { readonly kind: "directory"; readonly directory: string; readonly follow?: boolean }
  | { readonly kind: "screencast"; readonly tab?: string }
  | { readonly kind: "push" };

const video = z.strictObject({
  video: z.string().min(1, "must name a video file or a stream URL"),
  fps: z.number().positive().max(30, "must be at most 30").optional(),
  live: z.boolean().optional(),
});
const directory = z.strictObject({
  directory: z.string().min(1, "must name a folder of images"),
  follow: z.boolean().optional(),
});
const screencast = z.strictObject({
  screencast: z.union([z.string().min(1), z.literal(true), z.null()]),
});
const push = z.strictObject({ push: z.literal(true) });

const KINDS = ["video", "directory", "screencast", "push"] as const;

/**
 * Reads the `source` of a `watch:` section: `{ video: PATH_OR_URL, fps?, live? }`,
 * `{ directory: PATH, follow? }`, `{ screencast: TAB_ID | true }` (the agent's browser tab) or
 * `{ push: true }`. Returns the config, or the issues (each naming the field, `watch.source.fps`).
 */
export function readWatchSource(
  value: unknown,
): { source: WatchSourceConfig } | { issues: WatchSettingIssue[] } {
  const kind =
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? KINDS.filter((name) => name in value)
      : [];
  if (kind.length !== 1) {
    return {
      issues: [
        {
          path: "watch.source",
          message: `must be a mapping with exactly one of ${KINDS.join(", ")} (e.g. source: { directory: ./frames })`,
        },
      ],
    };
  }
  const schema = { video, directory, screencast, push }[kind[0]!];
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    return {
      issues: parsed.error.issues.map((issue) => ({
        path: ["watch.source", ...issue.path.map(String)].join("."),
        message:
          issue.code === "unrecognized_keys"
            ? `has unknown key(s) ${issue.keys.join(", ")} for a ${kind[0]} source`
            : issue.message,
      })),
    };
  }
  const data = parsed.data as Record<string, unknown>;
  switch (kind[0]!) {
    case "video":
      return {
        source: {
          kind: "video",
          input: data.video as string,
          ...(data.fps !== undefined ? { fps: data.fps as number } : {}),
          ...(data.live !== undefined ? { live: data.live as boolean } : {}),
        },
      };
    case "directory":
      return {
        source: {
          kind: "directory",
          directory: data.directory as string,
          ...(data.follow !== undefined ? { follow: data.follow as boolean } : {}),
        },
      };
    case "screencast":
      return {
        source: {
          kind: "screencast",
          ...(typeof data.screencast === "string" ? { tab: data.screencast } : {}),
        },
      };
    default:
      return { source: { kind: "push" } };
  }
}
