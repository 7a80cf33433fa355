// Preloaded with `--import` (through NODE_OPTIONS) into a child `spool`: records, in the file
// $SPOOL_TEST_MODULE_LOG, `started <script>` (the proof it ran), then one `<url> <- <importer>`
// line per module URL the ESM loader resolves whose path holds `@opentelemetry`, so a test can
// tell whether (and by whom) OpenTelemetry was loaded.
import { appendFileSync } from "node:fs";
import { register } from "node:module";

const file = process.env.SPOOL_TEST_MODULE_LOG;
if (file) appendFileSync(file, `started ${process.argv[1] ?? ""}\n`);
register(new URL("./module-load-hooks.mjs", import.meta.url), { data: { file } });
