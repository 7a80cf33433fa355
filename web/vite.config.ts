import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * The dashboard's build: `vite build web --config web/vite.config.ts` writes `dist/web/` (hashed
 * assets under `assets/`), which `spool serve` serves. JSX through esbuild's automatic runtime.
 */
export default defineConfig({
  root,
  base: "/",
  esbuild: { jsx: "automatic" },
  resolve: {
    alias: { "node:crypto": fileURLToPath(new URL("src/node-crypto.ts", import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    target: "es2022",
    chunkSizeWarningLimit: 600,
    rollupOptions: {
      // zod's sources carry comments Rollup cannot place; they change nothing in the output.
      onwarn(warning, warn) {
        if (warning.code !== "INVALID_ANNOTATION") warn(warning);
      },
    },
  },
  logLevel: "warn",
});
