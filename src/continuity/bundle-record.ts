import { createHash } from "node:crypto";
import type { ArtifactStore } from "../log/index.js";
import { canonicalJson, type EventData } from "../spec/index.js";
import type { ContextBundle } from "./context-bundle.js";

/** `context.compiled` data. */
export type CompiledData = EventData<"context.compiled">;

/**
 * The manifest a bundle is stored as: everything that decides the request, by reference where
 * the log or another artifact already holds it (the system prompt is its own artifact, shared by
 * every step that has the same one; messages are named by event range). With the log, it
 * rebuilds the request exactly; its `digest` is the request's.
 */
export interface BundleManifest {
  version: 1;
  model: string;
  system: string;
  tools?: string;
  summaries: string[];
  pinned: string[];
  ranges: ContextBundle["ranges"];
  feeds?: string;
  parts: ContextBundle["parts"];
  tokens: number;
  budget: number;
  digest: string;
}

/**
 * Stores a bundle (its system prompt and its manifest, both content-addressed) and gives the
 * `context.compiled` data that records it. `known` remembers artifacts already stored, so a
 * step whose system prompt did not change stores only its small manifest.
 */
export async function recordBundle(
  artifacts: ArtifactStore,
  bundle: ContextBundle,
  known: Set<string> = new Set(),
): Promise<CompiledData> {
  const prepared = prepareBundle(artifacts, bundle, known);
  await prepared.stored;
  return prepared.data;
}

/**
 * `recordBundle` in two halves: the `context.compiled` data at once (the hashes are computed
 * here), and the artifact writes started, to await beside the event's append (the two syncs
 * overlap instead of adding up).
 */
export function prepareBundle(
  artifacts: ArtifactStore,
  bundle: ContextBundle,
  known: Set<string> = new Set(),
): { data: CompiledData; stored: Promise<void> } {
  const writes: Promise<unknown>[] = [];
  const put = (text: string, mediaType: string) => {
    const bytes = Buffer.from(text, "utf8");
    const hash = createHash("sha256").update(bytes).digest("hex");
    if (!known.has(hash)) {
      known.add(hash);
      writes.push(
        artifacts.put(bytes, { mediaType }).catch((error: unknown) => {
          known.delete(hash);
          throw error;
        }),
      );
    }
    return { hash, size: bytes.length };
  };
  const system = put(bundle.request.system ?? "", "text/markdown");
  const manifest: BundleManifest = {
    version: 1,
    model: bundle.request.model,
    system: system.hash,
    ...(bundle.request.tools
      ? { tools: createHash("sha256").update(canonicalJson(bundle.request.tools)).digest("hex") }
      : {}),
    summaries: bundle.summaries,
    pinned: bundle.pinned,
    ranges: bundle.ranges,
    ...(bundle.feeds ? { feeds: bundle.feeds } : {}),
    parts: bundle.parts,
    tokens: bundle.tokens,
    budget: bundle.budget,
    digest: bundle.digest,
  };
  const stored = put(canonicalJson(manifest), BUNDLE_MEDIA_TYPE);
  return {
    data: compiledData(bundle, {
      hash: stored.hash,
      size: stored.size,
      media_type: BUNDLE_MEDIA_TYPE,
    }),
    stored: Promise.all(writes).then(() => undefined),
  };
}

/** The media type of a stored bundle manifest. */
export const BUNDLE_MEDIA_TYPE = "application/vnd.spool.bundle+json";

/** The `context.compiled` data of a bundle (with its stored manifest, when there is one). */
export function compiledData(
  bundle: ContextBundle,
  artifact?: NonNullable<CompiledData["bundle"]>,
): CompiledData {
  return {
    strategy: "continuity",
    messages: bundle.messages,
    omitted: bundle.omitted,
    tokens: bundle.tokens,
    budget: bundle.budget,
    digest: bundle.digest,
    parts: bundle.parts,
    ranges: bundle.ranges,
    summaries: bundle.summaries,
    pinned: bundle.pinned,
    ...(artifact ? { bundle: artifact } : {}),
    ...(bundle.overBudget ? { over_budget: true } : {}),
  };
}
