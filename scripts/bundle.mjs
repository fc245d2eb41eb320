#!/usr/bin/env node
// Bundles the Node entry point into dist/magi-code.mjs, the npm `bin`. Node 20
// has no compile cache and pays per module for resolution and (for
// jsonc-parser's UMD build) its CommonJS loader: one tree-shaken file starts
// about 30 ms faster (see bench/README.md). Code splitting keeps what only a
// ready child's requests need (its workers, then provider clients, tools,
// re2js) in chunks under dist/chunks/, loaded by dynamic imports on first use,
// so cold start does not parse it (the start-up budget in
// docs/architecture.md). Deno runs the sources.
import { build } from "esbuild";
import { chmod, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist");

// Chunk names carry content hashes; stale ones from earlier builds would pile up.
await rm(join(outdir, "chunks"), { recursive: true, force: true });
const built = await build({
  entryPoints: { "magi-code": join(root, "runtime", "node.ts") },
  outdir,
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
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
  metafile: true,
  // The metafile's paths are relative to this, whatever directory the script runs from.
  absWorkingDir: root,
});
await chmod(join(outdir, "magi-code.mjs"), 0o755);
// Which sources each output file holds, for the start-up budget test (tests/startup-budget.test.ts),
// which names the modules a loaded chunk brings; not shipped (package.json `files`).
const inputs = Object.fromEntries(
  Object.entries(built.metafile.outputs).map(([file, { inputs }]) => [relative(outdir, join(root, file)), Object.keys(inputs)]),
);
await writeFile(join(outdir, "bundle-inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);
