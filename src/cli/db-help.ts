/** The help of `--db`, as every command that opens the log gives it. */
export const DB_HELP = `  --db <dir | file.db | postgres://…>
                         Where the log lives (default: $SPOOL_DB, then ./.spool/)`;

/** The help of `-h`, as every command gives it. */
export const HELP_HELP = "  -h, --help             Show this help";

/** The last two options of the help of every command that opens the log: `--db` and `-h`. */
export const DB_HELP_LINES = `${DB_HELP}\n${HELP_HELP}`;
