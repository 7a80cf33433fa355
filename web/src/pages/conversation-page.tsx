import { useEffect, useRef, useState } from "react";
import { type ApiError, addTurn, cancelRun } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Link } from "../components/link.js";
import { Markdown } from "../components/markdown.js";
import { type ActionItem, ConversationFold, type StepItem } from "../fold/conversation.js";
import { count, duration, shortJson } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";
import { pathOf } from "../router.js";

/**
 * The live conversation: turns, each step's thoughts (folded), actions with their status and
 * duration, and responses as markdown, streaming as the model writes; handoffs as one line; a box
 * to send a turn and a button to stop the run. After a reload it reads the log up to its head and
 * follows from there, so a streaming answer goes on where it was.
 */
export function ConversationPage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const fold = useFold(continuity, log.events, () => new ConversationFold());
  const end = useRef<HTMLDivElement | null>(null);
  const stick = useStickToBottom();
  const last = log.events.at(-1)?.seq ?? 0;
  useEffect(() => {
    if (last > 0 && stick.current) end.current?.scrollIntoView({ block: "end" });
  }, [last, stick]);
  return (
    <section className="conversation" aria-label="Conversation">
      {log.error ? <ErrorBanner error={log.error} title="Log" /> : null}
      <ol className="items">
        {fold.items.map((item) => {
          switch (item.kind) {
            case "turn":
              return (
                <li
                  key={item.key}
                  className={item.delivery ? "turn delivery" : "turn"}
                  data-seq={item.seq}
                >
                  <span className="who">{item.actor}</span>
                  <div className="turn-text">{item.text}</div>
                </li>
              );
            case "step":
              return <Step key={item.key} item={item} fold={fold} continuity={continuity} />;
            case "handoff":
              return (
                <li key={item.key} className="handoff">
                  {item.text} → <span className="mono">{item.to}</span>
                </li>
              );
            case "notice":
              return (
                <li key={item.key} className={`notice ${item.tone}`}>
                  {item.text}
                </li>
              );
            default:
              return null;
          }
        })}
      </ol>
      <div ref={end} />
      <Composer continuity={continuity} running={fold.running} />
    </section>
  );
}

/**
 * Whether the page was scrolled to (near) its bottom at the last scroll: new output scrolls into
 * view only then, so reading earlier messages is not interrupted.
 */
function useStickToBottom() {
  const stick = useRef(true);
  useEffect(() => {
    const onScroll = () => {
      const bottom = document.documentElement.scrollHeight - window.innerHeight - window.scrollY;
      stick.current = bottom < 160;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, []);
  return stick;
}

function Step({
  item,
  fold,
  continuity,
}: {
  item: StepItem;
  fold: ConversationFold;
  continuity: string;
}) {
  return (
    <li
      className="step"
      style={{ marginLeft: `${item.depth * 1.5}rem` }}
      data-step={item.step}
      aria-busy={item.streaming}
    >
      {item.blocks.map((block) =>
        block.kind === "thought" ? (
          <details key={block.id} className="thought" open={item.streaming}>
            <summary>thinking</summary>
            <div className="thought-text">{block.text.trim()}</div>
          </details>
        ) : (
          <div key={block.id} className="response">
            <Markdown text={fold.substitute(item, block.text.trim())} />
          </div>
        ),
      )}
      {item.actions.length > 0 ? (
        <ul className="actions" aria-label="Actions">
          {item.actions.map((action) => (
            <Action key={action.id} action={action} />
          ))}
        </ul>
      ) : null}
      <div className="step-meta">
        {item.streaming ? <span className="streaming">● streaming</span> : null}
        {item.usage ? (
          <span>
            {count(item.usage.input)} in · {count(item.usage.output)} out
            {item.durationMs !== undefined ? ` · ${duration(item.durationMs)}` : ""}
          </span>
        ) : null}
        <Link to={pathOf(continuity, "context", item.step)} className="mono">
          {item.step}
        </Link>
      </div>
    </li>
  );
}

const GLYPH: Record<ActionItem["status"], string> = {
  running: "◌",
  succeeded: "✓",
  failed: "✗",
  skipped: "↷",
  cancelled: "■",
  interrupted: "⚠",
};

function Action({ action }: { action: ActionItem }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (action.status !== "running") return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [action.status]);
  const elapsed = action.durationMs ?? Math.max(0, now - Date.parse(action.startedAt));
  return (
    <li className={`action ${action.status}`} data-status={action.status}>
      <span className="glyph" aria-hidden="true">
        {GLYPH[action.status]}
      </span>
      <span className="mono name">
        {action.type} {action.name}
      </span>
      <span className="status">{action.status}</span>
      <span className="duration">{duration(elapsed)}</span>
      <span className="mono params">{shortJson(action.parameters)}</span>
      {action.note ? <span className="note">{action.note}</span> : null}
    </li>
  );
}

function Composer({ continuity, running }: { continuity: string; running: boolean }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [sending, setSending] = useState(false);
  const send = async () => {
    if (text.trim() === "" || sending) return;
    setSending(true);
    try {
      await addTurn(continuity, text);
      setText("");
      setError(undefined);
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setSending(false);
    }
  };
  const cancel = async () => {
    try {
      await cancelRun(continuity);
      setError(undefined);
    } catch (failure) {
      setError(failure as ApiError);
    }
  };
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      {error ? <ErrorBanner error={error} /> : null}
      <textarea
        aria-label="Message"
        placeholder="Message (Enter sends, Shift+Enter for a new line)"
        value={text}
        rows={2}
        onChange={(event) => setText(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey) {
            event.preventDefault();
            void send();
          }
        }}
      />
      <div className="composer-buttons">
        <button type="submit" disabled={sending || text.trim() === ""}>
          Send
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!running}
          onClick={() => void cancel()}
        >
          Stop
        </button>
      </div>
    </form>
  );
}
