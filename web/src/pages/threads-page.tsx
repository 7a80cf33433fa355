import { Link } from "../components/link.js";
import { type Handoff, type ThreadInfo, ThreadsFold } from "../fold/threads.js";
import { clock, count } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";
import { pathOf } from "../router.js";

/**
 * The thread chain: each chain of continuations root first, every handoff between two threads
 * with its reason, pressure, tokens before and after and summary size; then every thread (the
 * runtime's summarizer and hook workers included) in a table.
 */
export function ThreadsPage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const fold = useFold(continuity, log.events, () => new ThreadsFold());
  const chains = fold.chains();
  return (
    <section aria-label="Threads">
      <h2>Thread chain</h2>
      {chains.length === 0 ? <p className="empty">No thread has started yet.</p> : null}
      {chains.map((chain) => (
        <ol key={chain[0]!.chainRoot} className="chain" aria-label={`Chain ${chain[0]!.chainRoot}`}>
          {chain.map((thread) => (
            <li key={thread.id}>
              <ThreadCard thread={thread} continuity={continuity} />
              {thread.handoff ? <HandoffLink handoff={thread.handoff} /> : null}
            </li>
          ))}
        </ol>
      ))}
      <h2>All threads</h2>
      <table className="grid">
        <thead>
          <tr>
            <th>thread</th>
            <th>directive</th>
            <th>model</th>
            <th>status</th>
            <th>steps</th>
            <th>tokens in / out</th>
            <th>started</th>
          </tr>
        </thead>
        <tbody>
          {[...fold.threads.values()].map((thread) => (
            <tr key={thread.id} className={thread.worker ? "worker" : undefined}>
              <td className="mono">{thread.id}</td>
              <td>{thread.directive}</td>
              <td className="mono">{thread.model ?? "—"}</td>
              <td>
                <span className={`badge ${thread.status}`}>{thread.status}</span>
              </td>
              <td>{thread.steps.length}</td>
              <td>
                {count(thread.tokens.input)} / {count(thread.tokens.output)}
              </td>
              <td>{clock(thread.startedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function ThreadCard({ thread, continuity }: { thread: ThreadInfo; continuity: string }) {
  const lastStep = thread.steps.at(-1);
  return (
    <div className="thread-card" data-thread={thread.id}>
      <div className="mono thread-id">{thread.id}</div>
      <div>
        <span className={`badge ${thread.status}`}>{thread.status}</span> {thread.directive}
        {thread.model ? <span className="mono"> · {thread.model}</span> : null}
      </div>
      <div className="quiet">
        {thread.steps.length} steps · {count(thread.tokens.input)} in ·{" "}
        {count(thread.tokens.output)} out
        {lastStep ? (
          <>
            {" · "}
            <Link to={pathOf(continuity, "context", lastStep)}>latest context</Link>
          </>
        ) : null}
      </div>
    </div>
  );
}

function HandoffLink({ handoff }: { handoff: Handoff }) {
  const details = [
    handoff.pressureRatio !== undefined
      ? `pressure ${handoff.pressureRatio.toFixed(2)}`
      : undefined,
    handoff.tokensBefore !== undefined && handoff.tokensAfter !== undefined
      ? `${count(handoff.tokensBefore)} → ${count(handoff.tokensAfter)} tokens`
      : undefined,
    handoff.summaryTokens !== undefined
      ? `summary ${count(handoff.summaryTokens)} tokens`
      : handoff.mode === "trailing-only"
        ? "no summary: recent messages only"
        : undefined,
  ].filter(Boolean);
  return (
    <div className="handoff-link" role="note" aria-label="Handoff">
      ↓ handoff at {clock(handoff.ts)} ({handoff.reason})
      {details.length ? ` — ${details.join(", ")}` : ""}
    </div>
  );
}
