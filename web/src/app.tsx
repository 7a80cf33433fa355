import { useState } from "react";
import { storedToken, storeToken } from "./api.js";
import { Link } from "./components/link.js";
import { resetLogs, useContinuityLog } from "./log/use-log.js";
import { ContextPage } from "./pages/context-page.js";
import { ContinuitiesPage } from "./pages/continuities-page.js";
import { ConversationPage } from "./pages/conversation-page.js";
import { EventsPage } from "./pages/events-page.js";
import { SourcesPage } from "./pages/sources-page.js";
import { ThreadsPage } from "./pages/threads-page.js";
import { UsagePage } from "./pages/usage-page.js";
import { WatchPage } from "./pages/watch-page.js";
import { pathOf, type Route, routeOf, useLocation } from "./router.js";

const TABS = [
  ["conversation", "Conversation"],
  ["threads", "Threads"],
  ["context", "Context"],
  ["events", "Events"],
  ["sources", "Sources"],
  ["usage", "Tokens & spend"],
  ["watch", "Stream watch"],
] as const;

/** The dashboard: a header with the token field, a continuity's tabs, and the page of the address. */
export function App() {
  const { path } = useLocation();
  const route = routeOf(path);
  const [tokenVersion, setTokenVersion] = useState(0);
  return (
    <>
      <header className="top">
        <Link to="/" className="brand">
          spool
        </Link>
        {"continuity" in route ? (
          <>
            <span className="mono crumb">{route.continuity}</span>
            <LiveStatus continuity={route.continuity} />
          </>
        ) : null}
        <TokenField
          onChange={() => {
            resetLogs();
            setTokenVersion(tokenVersion + 1);
          }}
        />
      </header>
      {"continuity" in route ? (
        <nav className="tabs" aria-label="Pages">
          {TABS.map(([page, label]) => (
            <Link key={page} to={pathOf(route.continuity, page)} current={route.page === page}>
              {label}
            </Link>
          ))}
        </nav>
      ) : null}
      <main key={tokenVersion}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "continuities":
      return <ContinuitiesPage />;
    case "conversation":
      return <ConversationPage continuity={route.continuity} />;
    case "threads":
      return <ThreadsPage continuity={route.continuity} />;
    case "context":
      return <ContextPage continuity={route.continuity} step={route.step} />;
    case "events":
      return <EventsPage continuity={route.continuity} />;
    case "sources":
      return <SourcesPage continuity={route.continuity} />;
    case "usage":
      return <UsagePage continuity={route.continuity} />;
    case "watch":
      return <WatchPage continuity={route.continuity} />;
    default:
      return (
        <p className="empty" role="alert">
          Nothing at <span className="mono">{route.path}</span>.{" "}
          <Link to="/">All continuities</Link>
        </p>
      );
  }
}

const STATUS_TEXT = {
  loading: "loading",
  live: "live",
  reconnecting: "reconnecting…",
  failed: "offline",
};

function LiveStatus({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  return (
    <span className={`live-status ${log.status}`} role="status" aria-label="Live status">
      ● {STATUS_TEXT[log.status]}
    </span>
  );
}

/** The access token: entered once, kept in localStorage, never shown again. */
function TokenField({ onChange }: { onChange(): void }) {
  const [has, setHas] = useState(() => storedToken() !== "");
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState("");
  if (has && !editing) {
    return (
      <span className="token">
        token set{" "}
        <button type="button" className="link" onClick={() => setEditing(true)}>
          change
        </button>
      </span>
    );
  }
  return (
    <form
      className="token"
      onSubmit={(event) => {
        event.preventDefault();
        storeToken(value.trim());
        setHas(value.trim() !== "");
        setValue("");
        setEditing(false);
        onChange();
      }}
    >
      <input
        type="password"
        aria-label="Access token"
        placeholder="access token"
        autoComplete="off"
        value={value}
        onChange={(event) => setValue(event.currentTarget.value)}
      />
      <button type="submit">Use token</button>
    </form>
  );
}
