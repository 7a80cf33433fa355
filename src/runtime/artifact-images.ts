import type { ArtifactStore } from "../log/index.js";
import type {
  Provider,
  ProviderMessage,
  ProviderRequest,
  StreamOptions,
  StreamPart,
  UserPart,
} from "../providers/index.js";

type ImagePart = Extract<UserPart, { type: "image" }>;

/**
 * `provider` with the images a request refers to by artifact (`UserPart.artifact`: a screenshot
 * in a thread's context) read from `artifacts` into their `data` right before each call. A
 * compiled request (and its digest, and what replay compares) holds only the hashes; the bytes
 * are read at this edge. An image the store no longer has is left out and its place says so in
 * text (`[image <hash> is no longer in the artifact store]`), so the call still goes out. Never
 * throws: a read that fails ends the stream with an error part (`provider.bad-request`).
 */
export function withArtifactImages(provider: Provider, artifacts: ArtifactStore): Provider {
  const wrapped: Provider = {
    get name() {
      return provider.name;
    },
    get format() {
      return provider.format;
    },
    stream: (request, options) => streamResolved(provider, artifacts, request, options),
  };
  if (provider.describeModel) {
    wrapped.describeModel = (model, options) => provider.describeModel!(model, options);
  }
  return wrapped;
}

async function* streamResolved(
  provider: Provider,
  artifacts: ArtifactStore,
  request: ProviderRequest,
  options: StreamOptions | undefined,
): AsyncGenerator<StreamPart> {
  let resolved: ProviderRequest;
  try {
    resolved = await resolveImages(request, artifacts);
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

/**
 * `request` with every image that names an artifact read into `data` (base64); the same object
 * when none does. Images the store lacks are dropped, with a note in their place.
 */
export async function resolveImages(
  request: ProviderRequest,
  artifacts: ArtifactStore,
): Promise<ProviderRequest> {
  if (!request.messages.some(refersToArtifact)) return request;
  const bytes = new Map<string, string | undefined>();
  const read = async (hash: string) => {
    if (!bytes.has(hash)) {
      bytes.set(
        hash,
        (await artifacts.has(hash)) ? (await artifacts.get(hash)).toString("base64") : undefined,
      );
    }
    return bytes.get(hash);
  };
  const missing = (hash: string) => `[image ${hash} is no longer in the artifact store]`;
  const messages: ProviderMessage[] = [];
  for (const message of request.messages) {
    if (!refersToArtifact(message)) {
      messages.push(message);
    } else if (message.role === "user" && typeof message.content !== "string") {
      const content: UserPart[] = [];
      for (const part of message.content) {
        if (part.type !== "image" || part.artifact === undefined) content.push(part);
        else {
          const data = await read(part.artifact);
          content.push(
            data === undefined ? { type: "text", text: missing(part.artifact) } : { ...part, data },
          );
        }
      }
      messages.push({ role: "user", content });
    } else if (message.role === "tool") {
      const results = [];
      for (const result of message.results) {
        if (!result.images) {
          results.push(result);
          continue;
        }
        const images: ImagePart[] = [];
        const notes: string[] = [];
        for (const image of result.images) {
          const data = image.artifact === undefined ? image.data : await read(image.artifact);
          if (data === undefined) notes.push(missing(image.artifact!));
          else images.push({ ...image, data });
        }
        const { images: _images, ...rest } = result;
        results.push({
          ...rest,
          ...(notes.length > 0 ? { output: `${result.output}\n${notes.join("\n")}` } : {}),
          ...(images.length > 0 ? { images } : {}),
        });
      }
      messages.push({ role: "tool", results });
    } else {
      messages.push(message);
    }
  }
  return { ...request, messages };
}

function refersToArtifact(message: ProviderMessage): boolean {
  if (message.role === "tool") {
    return message.results.some((result) =>
      result.images?.some((image) => image.artifact !== undefined),
    );
  }
  return (
    message.role === "user" &&
    typeof message.content !== "string" &&
    message.content.some((part) => part.type === "image" && part.artifact !== undefined)
  );
}
