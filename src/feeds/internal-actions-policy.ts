import type { InternalActionsPolicy } from "../actions/index.js";

/**
 * The manifest's `internal_actions` when it has none: every internal action allowed. The policy
 * type and its enforcement belong to `createInternalExecutor` in `src/actions`.
 */
export const ALLOW_ALL_INTERNAL_ACTIONS: InternalActionsPolicy = { enabled: true };
