/** Segments of refs remembered at most (the oldest are forgotten: their refs read as unknown). */
const SEGMENTS_KEPT = 10_000;
/** Snapshots remembered for `diff` at most. */
const SNAPSHOTS_KEPT = 50;

interface Segment {
  from: number;
  /** One past the last ref number of the segment. */
  to: number;
  tab: string;
  doc: string;
}

/** Where a ref was handed out: its tab and the document it was in. */
export interface RefOrigin {
  tab: string;
  doc: string;
}

/**
 * The refs (`e1`, `e2`, …) the browser's snapshots handed out: numbered across the whole session,
 * so a ref names one element of one document of one tab, never two. It remembers which tab and
 * document each range of numbers came from (to refuse a ref after a navigation or from another
 * tab) and the last snapshot of each view (for `diff`). Memory is bounded.
 */
export class RefBook {
  #segments: Segment[] = [];
  #snapshots = new Map<string, string[]>();
  /** The number the next new ref gets at least. */
  next = 1;

  /** Records that refs `[from, to)` were handed out in `doc` of `tab`. */
  record(from: number, to: number, tab: string, doc: string): void {
    if (to > this.next) this.next = to;
    if (to <= from) return;
    const last = this.#segments.at(-1);
    if (last && last.tab === tab && last.doc === doc && last.to === from) last.to = to;
    else this.#segments.push({ from, to, tab, doc });
    if (this.#segments.length > SEGMENTS_KEPT) this.#segments.shift();
  }

  /** Where `ref` came from, or undefined when no snapshot of this session handed it out. */
  origin(ref: string): RefOrigin | undefined {
    const match = /^e(\d+)$/.exec(ref);
    if (!match) return undefined;
    const n = Number(match[1]);
    const segment = this.#segments.find((item) => n >= item.from && n < item.to);
    return segment ? { tab: segment.tab, doc: segment.doc } : undefined;
  }

  /**
   * The lines of the previous snapshot of `view` (tab, document and scope), replaced by `lines`;
   * undefined when there was none.
   */
  swap(view: string, lines: string[]): string[] | undefined {
    const previous = this.#snapshots.get(view);
    this.#snapshots.delete(view);
    this.#snapshots.set(view, lines);
    if (this.#snapshots.size > SNAPSHOTS_KEPT) {
      this.#snapshots.delete(this.#snapshots.keys().next().value as string);
    }
    return previous;
  }
}

/**
 * The lines of `after` that are new since `before` (`+ `) and those of `before` that are gone
 * (`- `), each side in its own order; lines that stayed are left out. Repeated lines count as
 * many times as they occur. Linear in the lines' number.
 */
export function diffLines(before: readonly string[], after: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of before) counts.set(line, (counts.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of after) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else added.push(`+ ${line}`);
  }
  const removed: string[] = [];
  for (const line of before) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      counts.set(line, left - 1);
      removed.push(`- ${line}`);
    }
  }
  return [...removed, ...added];
}
