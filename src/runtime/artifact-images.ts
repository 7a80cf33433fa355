import type { ArtifactStore } from "../log/index.js";
import {
  messageImages,
  type Provider,
  type ProviderRequest,
  replaceImages,
  type StreamOptions,
  type StreamPart,
} from "../providers/index.js";

/** The base64 bytes of images read for a request, by artifact hash (undefined: not in the store). */
type ImageBytes = Map<string, string | undefined>;

/**
 * `provider` with the images a request refers to by artifact (`UserPart.artifact`: a screenshot
 * in a thread's context) read from `artifacts` into their `data` right before each call. A
 * compiled request (and its digest, and what replay compares) holds only the hashes; the bytes
 * are read at this edge, and the images of one call are kept for the next (a context keeps its
 * newest screenshots from step to step), so each is read once while it stays. An image the
 * store no longer has is left out and its place says so in text (`[image <hash> is no longer in
 * the artifact store]`), so the call still goes out. Never throws: a read that fails ends the
 * stream with an error part (`provider.bad-request`).
 */
export function withArtifactImages(provider: Provider, artifacts: ArtifactStore): Provider {
  let last: ImageBytes = new Map();
  // A request naming no artifact goes to the provider as it is: no layer between its parts.
  function stream(
    request: ProviderRequest,
    options: StreamOptions | undefined,
  ): AsyncIterable<StreamPart> {
    if (namesArtifacts(request)) return resolvedStream(request, options);
    last = new Map();
    return provider.stream(request, options);
  }
  async function* resolvedStream(
    request: ProviderRequest,
    options: StreamOptions | undefined,
  ): AsyncGenerator<StreamPart> {
    let resolved: ProviderRequest;
    try {
      const bytes: ImageBytes = new Map();
      resolved = await resolveImages(request, artifacts, bytes, last);
      last = bytes;
    } catch (error) {
      yield {
        type: "error",
        error: {
          code: "provider.bad-request",
          message: `could not read a screenshot of the context from the artifact store: ${error instanceof Error ? error.message : String(error)}`,
          retryable: false,
        },
      };
      return;
    }
    yield* provider.stream(resolved, options);
  }
  const wrapped: Provider = {
    get name() {
      return provider.name;
    },
    get format() {
      return provider.format;
    },
    stream,
  };
  if (provider.describeModel) {
    wrapped.describeModel = (model, options) => provider.describeModel!(model, options);
  }
  return wrapped;
}

/** True when an image of `request` names an artifact (its bytes are read before the call). */
function namesArtifacts(request: ProviderRequest): boolean {
  for (const message of request.messages) {
    for (const image of messageImages(message)) if (image.artifact !== undefined) return true;
  }
  return false;
}

/**
 * `request` with every image that names an artifact read into `data` (base64); the same object
 * when none does. Images the store lacks are dropped, with a note in their place. What it reads
 * goes into `bytes`; what `known` already holds is not read again.
 */
export async function resolveImages(
  request: ProviderRequest,
  artifacts: ArtifactStore,
  bytes: ImageBytes = new Map(),
  known: ImageBytes = new Map(),
): Promise<ProviderRequest> {
  for (const image of request.messages.flatMap(messageImages)) {
    const hash = image.artifact;
    if (hash === undefined || bytes.has(hash)) continue;
    bytes.set(
      hash,
      known.has(hash)
        ? known.get(hash)
        : (await artifacts.has(hash))
          ? (await artifacts.get(hash)).toString("base64")
          : undefined,
    );
  }
  if (bytes.size === 0) return request;
  const messages = request.messages.map((message) =>
    replaceImages(message, (image) => {
      if (image.artifact === undefined) return image;
      const data = bytes.get(image.artifact);
      return data === undefined
        ? `[image ${image.artifact} is no longer in the artifact store]`
        : { ...image, data };
    }),
  );
  return { ...request, messages };
}
