import { createHash } from "node:crypto";
import type { ArtifactStore } from "../log/index.js";
import { canonicalJson, type EventData } from "../spec/index.js";
import type { ContextBundle } from "./context-bundle.js";

/** `context.compiled` data. */
export type CompiledData = EventData<"context.compiled">;

/**
 * What decided a step's request, beside the log: everything by reference where the log or an
 * artifact already holds it (the system prompt is its own artifact, shared by every step that has
 * the same one; messages are named by event range). With the log, it rebuilds the request
 * exactly; its `digest` is the request's. `context.compiled` carries it inline (`bundleManifest`
 * reads it back); logs written before that stored it as an artifact of its own (`bundle`).
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
 * Stores a bundle's system prompt (content-addressed) and gives the `context.compiled` data that
 * records the bundle. `known` remembers artifacts already stored, so a step whose system prompt
 * did not change stores nothing.
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

/** The last system prompt hashed, and its hash: most steps of a run share one. */
let lastSystem: { text: string; hash: string } | undefined;

/**
 * `recordBundle` in two halves: the `context.compiled` data at once (the hashes are computed
 * here), and the system prompt's write started (nothing when `known` has it), to await before
 * the event that names it is appended.
 */
export function prepareBundle(
  artifacts: ArtifactStore,
  bundle: ContextBundle,
  known: Set<string> = new Set(),
): { data: CompiledData; stored: Promise<void> } {
  const text = bundle.request.system ?? "";
  if (lastSystem?.text !== text) lastSystem = { text, hash: sha256(text) };
  const system = lastSystem.hash;
  let stored: Promise<void> = Promise.resolve();
  if (!known.has(system)) {
    known.add(system);
    stored = artifacts.put(Buffer.from(text, "utf8"), { mediaType: "text/markdown" }).then(
      () => undefined,
      (error: unknown) => {
        known.delete(system);
        throw error;
      },
    );
  }
  return {
    data: compiledData(bundle, {
      model: bundle.request.model,
      system,
      ...(bundle.request.tools ? { tools: toolsHash(bundle.request.tools) } : {}),
      ...(bundle.feeds ? { feeds: bundle.feeds } : {}),
    }),
    stored,
  };
}

/** The media type of a bundle manifest stored as an artifact (logs from before it was inline). */
export const BUNDLE_MEDIA_TYPE = "application/vnd.spool.bundle+json";

/** What `context.compiled` names beside the counts: the model and the hashes of the rest. */
export interface BundleReferences {
  model: string;
  system: string;
  tools?: string;
  feeds?: string;
}

/** The `context.compiled` data of a bundle (with what it references, when recorded). */
export function compiledData(bundle: ContextBundle, references?: BundleReferences): CompiledData {
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
    ...(bundle.memories ? { memories: bundle.memories } : {}),
    ...references,
    ...(bundle.overBudget ? { over_budget: true } : {}),
  };
}

/**
 * The manifest of a step's context from its `context.compiled` data: gathered from the data
 * itself, or read from the artifact a log written before that names (`bundle`). `undefined`
 * when the step recorded neither (an old log, or data made without references).
 */
export async function bundleManifest(
  artifacts: ArtifactStore,
  data: CompiledData,
): Promise<BundleManifest | undefined> {
  if (data.system !== undefined && data.model !== undefined) {
    return {
      version: 1,
      model: data.model,
      system: data.system,
      ...(data.tools !== undefined ? { tools: data.tools } : {}),
      summaries: data.summaries ?? [],
      pinned: data.pinned ?? [],
      ranges: data.ranges ?? [],
      ...(data.feeds !== undefined ? { feeds: data.feeds } : {}),
      parts: data.parts ?? { system: 0, pinned: 0, summaries: 0, feeds: 0, messages: 0 },
      tokens: data.tokens,
      budget: data.budget,
      digest: data.digest,
    };
  }
  if (!data.bundle) return undefined;
  return JSON.parse((await artifacts.get(data.bundle.hash)).toString("utf8")) as BundleManifest;
}

/** sha256 of tool specs' canonical JSON, by array: a directive's tools are one array per run. */
const TOOLS_HASHES = new WeakMap<object, string>();

function toolsHash(tools: object): string {
  let hash = TOOLS_HASHES.get(tools);
  if (hash === undefined) {
    hash = sha256(canonicalJson(tools));
    TOOLS_HASHES.set(tools, hash);
  }
  return hash;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
