import {
  checkSourceAccess,
  checkSourceEntry,
  type SourceDefinition,
  type SourceState,
} from "../sources/index.js";
import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";
import type { SessionSources, SourceChangeBy } from "./session-sources.js";

/** Who changes a source from outside the model: a person through the API or the CLI. */
export type SourceChanger = Exclude<SourceChangeBy, { by: "action" }>;

/** Why a change of a source from outside the model was refused. */
export type SourceChangeErrorCode =
  | "source.unknown"
  | "source.exists"
  | "source.bad-definition"
  | "source.denied";

/**
 * A change of a source that was refused (nothing logged): `source.unknown` (no such source, or
 * removed), `source.exists` (an add over a source in use), `source.bad-definition` (the entry
 * does not validate: `details.issues`), `source.denied` (its target is outside the access policy).
 */
export class SourceChangeError extends SpoolError {
  declare readonly code: SourceChangeErrorCode;

  constructor(code: SourceChangeErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * The changes a host (the HTTP API, the CLI) makes to a running continuity's sources, through the
 * same path as the model's source actions (`SessionSources`): each logs `source.added`,
 * `source.paused`, `source.resumed` or `source.removed` with `by` and the changer's actor and
 * origin on the event, and starts or stops the source's runner. Each answers the source's state
 * after the change, read back from the log.
 *
 * Checks, before anything is logged: an added entry validates as a manifest's `sources` entry
 * does, its id is not in use (a removed source's id may be taken again), and its target passes
 * the agent's access policy (the workspace, `source_actions`' allow lists and the declared
 * sources' own targets; commands only with `shell.run`): the model's `source_actions.kinds` list
 * does not bind a person. Pausing a paused source or resuming an active one changes nothing.
 */
export class SourceChanges {
  readonly #sources: SessionSources;

  constructor(sources: SessionSources) {
    this.#sources = sources;
  }

  /** Every source the log knows (the removed ones included), caught up with the log. */
  async states(): Promise<SourceState[]> {
    return [...(await this.#sources.current()).state.sources.values()];
  }

  /** Adds the source `entry` (a manifest `sources` entry) as `who`. */
  async add(entry: unknown, who: SourceChanger): Promise<SourceState> {
    const checked = checkSourceEntry(entry);
    if (!checked.definition) {
      const issues = checked.issues.map((issue) => ({
        path: issue.path.join("."),
        message: issue.message,
      }));
      throw new SourceChangeError(
        "source.bad-definition",
        `the source is not valid: ${issues.map((issue) => `${issue.path || "source"}: ${issue.message}`).join("; ")}`,
        {
          hint: "Write it as an entry of an agent manifest's sources: section (docs/sources.md)",
          details: { issues },
        },
      );
    }
    const definition: SourceDefinition = checked.definition;
    const existing = (await this.#sources.current()).source(definition.id);
    if (existing && existing.status !== "removed") {
      throw new SourceChangeError(
        "source.exists",
        `there is a source "${definition.id}" already; pick another id, or remove it first`,
      );
    }
    try {
      checkSourceAccess(definition, this.#sources.access);
    } catch (error) {
      throw new SourceChangeError(
        "source.denied",
        error instanceof Error ? error.message : String(error),
        {
          cause: error,
          hint: "Add the path to source_actions.allow_paths (a host to allow_hosts) in the agent's manifest; commands need the agent to have shell.run",
        },
      );
    }
    await this.#sources.addBy(definition, who);
    return this.#state(definition.id);
  }

  /** Pauses `id` as `who`: its runner stops; its cursor stays. */
  async pause(id: string, who: SourceChanger, reason?: string): Promise<SourceState> {
    const state = await this.#known(id);
    if (state.status !== "paused") await this.#sources.pauseBy(id, who, reason);
    return this.#state(id);
  }

  /** Resumes `id` as `who` (also a failed or exhausted one): it reads on from its cursor. */
  async resume(id: string, who: SourceChanger): Promise<SourceState> {
    const state = await this.#known(id);
    if (state.status !== "active") await this.#sources.resumeBy(id, who);
    return this.#state(id);
  }

  /** Removes `id` as `who`: its runner stops for good; what it read stays in the log. */
  async remove(id: string, who: SourceChanger): Promise<SourceState> {
    await this.#known(id);
    await this.#sources.removeBy(id, who);
    return this.#state(id);
  }

  async #known(id: string): Promise<SourceState> {
    const state = (await this.#sources.current()).source(id);
    if (!state || state.status === "removed") {
      throw new SourceChangeError(
        "source.unknown",
        `there is no source "${id}"${state ? " any more: it was removed" : ""}`,
        { hint: "GET /api/continuities/<id>/sources lists them" },
      );
    }
    return state;
  }

  async #state(id: string): Promise<SourceState> {
    return (await this.#sources.current()).source(id) as SourceState;
  }
}
