import { substituteText } from "./substitute-parameters.js";
import { interpolateValue, resolveReference, scanReference } from "./variable-reference.js";
import type { VariableSource } from "./variable-store.js";

/**
 * A piece of response text in output order: a string ready now, or a promise of the text of a
 * reference held back until the action that produces it ends. Promises never reject.
 */
export type SubstitutionPiece = string | Promise<string>;

/** Options of `createResponseSubstituter`. */
export interface ResponseSubstituterOptions {
  variables: VariableSource;
  /**
   * When an action of this step that stores `$name` is still pending, a promise that resolves
   * when it has ended (`StepScheduler.pendingOutput`); otherwise `undefined`.
   */
  pending?: (name: string) => Promise<void> | undefined;
}

/**
 * Substitutes `$references` in the deltas of one `<response>` block as they stream.
 *
 * Contract:
 * - Text without references passes through at once, unchanged.
 * - A reference to a variable that is set, and not about to be replaced by a pending action,
 *   is substituted at once (as `substituteText` would); an unknown name stays literal at once.
 * - A reference whose name a pending action will store becomes a held piece: it and every piece
 *   after it wait (the caller emits pieces in order) until that action ends; then it is
 *   substituted, or stays literal if the action failed or was skipped.
 * - A possible reference at the end of a delta (`$`, `$us`, `$user.`, `$rows[1`) is held back
 *   until the next delta or `end()` decides it, so `$us` + `er.name` works like `$user.name`.
 * - Never throws. Concatenating every piece's text gives the same text `substituteText` would on
 *   the whole response, evaluated at the moments the held pieces resolve.
 */
export interface ResponseSubstituter {
  push(text: string): SubstitutionPiece[];
  /** The response ended: decides what is held back at the end. */
  end(): SubstitutionPiece[];
}

/** A substituter for one response block. */
export function createResponseSubstituter(
  options: ResponseSubstituterOptions,
): ResponseSubstituter {
  const { variables, pending } = options;
  let tail = "";

  const scan = (text: string, final: boolean): SubstitutionPiece[] => {
    const pieces: SubstitutionPiece[] = [];
    let ready = "";
    let copied = 0;
    let dollar = text.indexOf("$");
    while (dollar >= 0) {
      const scanned = scanReference(text, dollar, final);
      if (scanned.kind === "incomplete") {
        tail = text.slice(dollar);
        pieces.push(ready + text.slice(copied, dollar));
        return compact(pieces);
      }
      let next = dollar + 1;
      if (scanned.kind === "escape") {
        ready += text.slice(copied, dollar + 1);
        copied = next = scanned.end;
      } else if (scanned.kind === "reference") {
        const waiting = pending?.(scanned.name);
        if (waiting !== undefined) {
          const literal = text.slice(dollar, scanned.end);
          pieces.push(ready + text.slice(copied, dollar));
          ready = "";
          const later = () => substituteText(literal, variables);
          pieces.push(waiting.then(later, later));
          copied = next = scanned.end;
        } else {
          const resolved = resolveReference(scanned, variables);
          if (resolved) {
            ready += text.slice(copied, dollar) + interpolateValue(resolved.value);
            copied = resolved.end;
          }
          next = resolved ? resolved.end : scanned.end;
        }
      }
      dollar = text.indexOf("$", next);
    }
    tail = "";
    pieces.push(ready + text.slice(copied));
    return compact(pieces);
  };

  return {
    push: (text) =>
      tail === "" && !text.includes("$") ? compact([text]) : scan(tail + text, false),
    end: () => (tail === "" ? [] : scan(tail, true)),
  };
}

/** Drops empty strings and joins adjacent ones. */
function compact(pieces: SubstitutionPiece[]): SubstitutionPiece[] {
  const out: SubstitutionPiece[] = [];
  for (const piece of pieces) {
    if (piece === "") continue;
    const last = out.length - 1;
    if (typeof piece === "string" && last >= 0 && typeof out[last] === "string")
      out[last] = (out[last] as string) + piece;
    else out.push(piece);
  }
  return out;
}
