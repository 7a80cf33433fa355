import { useEffect, useState } from "react";
import { type ApiError, type ContinuitySummary, listContinuities } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Link } from "../components/link.js";
import { pathOf } from "../router.js";

/** The continuities the token may read, newest activity first, each a link to its conversation. */
export function ContinuitiesPage() {
  const [list, setList] = useState<ContinuitySummary[] | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    let live = true;
    listContinuities().then(
      (found) => {
        if (!live) return;
        setList([...found].sort((a, b) => b.last_at.localeCompare(a.last_at)));
        setError(undefined);
      },
      (failure: ApiError) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, []);
  return (
    <section aria-label="Continuities">
      <h2>Continuities</h2>
      {error ? <ErrorBanner error={error} title="Continuities" /> : null}
      {list?.length === 0 ? (
        <p className="empty">No continuity yet: send a turn with `spool chat` or the API.</p>
      ) : null}
      {list && list.length > 0 ? (
        <table className="grid" aria-label="Continuities">
          <thead>
            <tr>
              <th>continuity</th>
              <th>title</th>
              <th>agent</th>
              <th>events</th>
              <th>your role</th>
              <th>last activity</th>
            </tr>
          </thead>
          <tbody>
            {list.map((continuity) => (
              <tr key={continuity.id}>
                <td>
                  <Link to={pathOf(continuity.id)} className="mono">
                    {continuity.id}
                  </Link>
                </td>
                <td>{continuity.title ?? ""}</td>
                <td className="mono">{continuity.agent ?? "—"}</td>
                <td>{continuity.events.toLocaleString("en-US")}</td>
                <td>{continuity.role}</td>
                <td>{new Date(continuity.last_at).toLocaleString("en-GB")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
