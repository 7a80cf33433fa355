/** Reading errors of the file and dataset sources, and what to tell the user about them. */

/** The `code` of a Node system error, if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A file not regular (a directory, a device): it cannot be followed. */
export class NotRegularFileError extends Error {
  readonly code = "ENOTREG";
  constructor(readonly path: string) {
    super(`${path} is not a regular file`);
  }
}

/** What went wrong reading `path`, and how to fix it. */
export function unreadableMessage(path: string, error: unknown): string {
  const code = errorCode(error);
  if (error instanceof NotRegularFileError) {
    return `${path} is not a regular file (a directory or a device): point the source at a file, or use a dataset source for a directory`;
  }
  if (code === "EACCES" || code === "EPERM") {
    const uid = process.getuid?.();
    return `permission denied reading ${path}: give the user running Spool${uid === undefined ? "" : ` (uid ${uid})`} read access to the file and search access to its directories (e.g. chmod o+r, or add it to the file's group), then resume the source`;
  }
  if (code === "EISDIR") return unreadableMessage(path, new NotRegularFileError(path));
  if (code === "ENOENT") {
    return `${path} does not exist: check the path (or create it), then resume the source`;
  }
  const detail = error instanceof Error ? error.message : String(error);
  return `cannot read ${path} (${code ?? "error"}: ${detail}): check the path and the disk, then resume the source`;
}
