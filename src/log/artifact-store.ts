/** What the store knows of one artifact. */
export interface ArtifactInfo {
  /** Lowercase hex sha256 of the bytes: the artifact's name. */
  hash: string;
  size: number;
  mediaType: string;
  createdAt: string;
}

/** A byte range: `offset` from the start, at most `length` bytes (to the end when absent). */
export interface ByteRange {
  offset?: number;
  length?: number;
}

/** Options of `ArtifactStore.put`. */
export interface PutArtifactOptions {
  /** Default `application/octet-stream`. The first put of some content decides its media type. */
  mediaType?: string;
}

/**
 * Content-addressed blobs (sha256), deduplicated, range-readable, kept in the log's backend.
 *
 * Contract: `put` of the same bytes twice stores them once and returns the same hash; an artifact
 * is either wholly present or absent (never partial), also after a crash; `get` of a missing hash
 * raises `StoreError` `artifact.not-found`; a range past the end is clipped, a negative one is
 * `artifact.bad-range`.
 */
export interface ArtifactStore {
  /** Stores bytes (or a stream of byte chunks) and returns what was stored. */
  put(
    content: Uint8Array | AsyncIterable<Uint8Array>,
    options?: PutArtifactOptions,
  ): Promise<ArtifactInfo>;
  /** Reads the artifact, or a range of it. */
  get(hash: string, range?: ByteRange): Promise<Buffer>;
  /** Streams the artifact, or a range of it, in chunks. */
  stream(hash: string, range?: ByteRange): AsyncIterable<Buffer>;
  /** What the store knows of `hash`, or `undefined` when absent. */
  stat(hash: string): Promise<ArtifactInfo | undefined>;
  has(hash: string): Promise<boolean>;
}
