#!/usr/bin/env node
// Bundles the Node entry point into one ESM file, dist/magi-code.mjs, the npm
// `bin`. Node 20 has no compile cache and pays per module for resolution and
// (for jsonc-parser's UMD build) its CommonJS loader: one tree-shaken file
// starts about 30 ms faster (see bench/README.md). Deno runs the sources.
import { build } from "esbuild";
import { chmod } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(root, "dist", "magi-code.mjs");

await build({
  entryPoints: [join(root, "runtime", "node.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  legalComments: "inline",
  // jsonc-parser's `main` is a UMD build whose factory requires its parts at run
  // time, which an ESM bundle cannot do; its ESM build (extensionless imports,
  // which esbuild resolves) bundles cleanly and tree-shakes.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  logLevel: "warning",
});
await chmod(outfile, 0o755);
