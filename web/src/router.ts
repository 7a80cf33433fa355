import { useSyncExternalStore } from "react";

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => {
  for (const listener of listeners) listener();
});

/** Goes to `path` in the dashboard without reloading the page. */
export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The page's path and query (`/c/main/events?type=action`), re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const url = new URL(href, location.origin);
  return { path: url.pathname, query: url.searchParams };
}

/** A dashboard route, as the address names it. */
export type Route =
  | { page: "continuities" }
  | {
      page: "conversation" | "threads" | "context" | "events" | "sources" | "usage" | "watch";
      continuity: string;
      step?: string;
    }
  | { page: "not-found"; path: string };

const PAGES = ["threads", "context", "events", "sources", "usage", "watch"] as const;

/** The route of `path`: `/`, `/c/<id>`, `/c/<id>/<page>` or `/c/<id>/context/<step>`. */
export function routeOf(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { page: "continuities" };
  if (parts[0] !== "c" || parts[1] === undefined) return { page: "not-found", path };
  const continuity = parts[1];
  if (parts.length === 2) return { page: "conversation", continuity };
  const page = PAGES.find((name) => name === parts[2]);
  if (!page || (parts.length > 3 && page !== "context") || parts.length > 4) {
    return { page: "not-found", path };
  }
  return parts[3] === undefined ? { page, continuity } : { page, continuity, step: parts[3] };
}

/** The address of a page of `continuity`. */
export function pathOf(continuity: string, page?: string, step?: string): string {
  const base = `/c/${encodeURIComponent(continuity)}`;
  if (!page || page === "conversation") return base;
  return step ? `${base}/${page}/${encodeURIComponent(step)}` : `${base}/${page}`;
}
