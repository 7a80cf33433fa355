#!/usr/bin/env node
/** Runs the CLI from source (`node --import tsx src/cli/entry.ts …`), as bin/spool.js runs the build. */
import { main } from "./main.js";

process.exitCode = await main(process.argv.slice(2));
