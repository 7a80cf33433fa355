/**
 * A test page for the browser's own `EventSource` on the live events route: the continuity comes
 * from `?continuity=`, the token from `localStorage["spool.token"]` (sent as `?access_token=`,
 * since an EventSource cannot send headers). Every message's id (its seq) is appended to
 * `#seen`, comma separated, so a test reads exactly what the browser delivered.
 */
const continuity = new URLSearchParams(location.search).get("continuity") ?? "live";
const token = localStorage.getItem("spool.token") ?? "";
const seen: string[] = [];
const list = document.getElementById("seen");
const source = new EventSource(
  `/api/continuities/${encodeURIComponent(continuity)}/events/live?access_token=${encodeURIComponent(token)}`,
);
source.onmessage = (message) => {
  seen.push(message.lastEventId);
  if (list) list.textContent = seen.join(",");
};
source.onerror = () => {
  document.body.dataset.errors = String(Number(document.body.dataset.errors ?? "0") + 1);
};
