/** An artifact attached to a turn (`turn.added`'s `attachments`). */
export interface TurnAttachment {
  readonly hash: string;
  readonly size: number;
  readonly media_type: string;
  readonly name?: string;
}

/**
 * What a stream watch running beside the runtime (docs/stream-watch.md) gives the foreground
 * agent's turns. The runtime asks; it never starts or stops a watch (the app does).
 *
 * Contract: `notes` is read once per step of a live run and the text goes into the step's
 * `context.feeds` (so replay reads it from the log and never asks); `attach` is asked once per
 * submitted turn and its answer is recorded on the `turn.added` (`attachments`), so a replay
 * re-runs the same turn with the same image. Neither should throw; a rejection of `attach`
 * submits the turn without attachments.
 */
export interface RuntimeWatch {
  /** The notes block of `continuity` for a step's context (`renderWatchNotes`); "" for none. */
  notes(continuity: string): string;
  /** The artifacts to attach to a turn of `text` (the current frame for a screen question). */
  attach?(continuity: string, text: string): Promise<readonly TurnAttachment[]>;
}

/** What the runtime tells a watch about a continuity's conversation now (`AgentRuntime.activity`). */
export interface ContinuityActivity {
  /** A foreground run is going or turns wait for one. */
  readonly busy: boolean;
  /** When the last turn was submitted through this runtime (epoch ms of the store's clock). */
  readonly lastTurnAt?: number;
}
