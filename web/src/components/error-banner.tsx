import type { ApiError } from "../api.js";

/** A server error shown plainly: its code and message, as the server said them. */
export function ErrorBanner({ error, title }: { error: ApiError | Error; title?: string }) {
  const code = "code" in error ? String(error.code) : "error";
  return (
    <div className="error-banner" role="alert">
      {title ? <strong>{title}: </strong> : null}
      <span className="mono">{code}</span> {error.message}
    </div>
  );
}
