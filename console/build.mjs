// Builds the console into one folder of three files (index.html, app.js, app.css), which CMake
// embeds in the gpufleet binary (docs/console.md). Usage: node build.mjs OUT_DIR
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2];
if (!out) {
  console.error("usage: node build.mjs OUT_DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: "src/main.jsx" },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  outdir: out,
  logLevel: "warning",
});
copyFileSync("src/index.html", join(out, "index.html"));
