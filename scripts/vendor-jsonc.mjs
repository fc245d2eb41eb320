#!/usr/bin/env node
/**
 * Generates runtime/jsonc-parser.deno.mjs: jsonc-parser's ESM build as one
 * file, which deno.json maps the bare `jsonc-parser` specifier to.
 *
 *   node scripts/vendor-jsonc.mjs          # rewrite the file
 *   node scripts/vendor-jsonc.mjs --check  # exit 1 if it is stale
 *
 * Why: the package's only build Deno can load is its UMD `main`, and loading
 * CommonJS boots Deno's Node-compatibility layer, which cost the Deno child
 * ~11 MiB of RSS and ~15 ms of cold start for a 50 KB parser. The ESM build
 * uses extensionless imports, which Deno refuses; bundled, they disappear.
 * Node is unaffected: its bundle already aliases the ESM build
 * (scripts/bundle.mjs), and tsc's output imports the package as usual.
 *
 * @module
 */

import { readFile, writeFile } from "node:fs/promises";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const OUTPUT = new URL("runtime/jsonc-parser.deno.mjs", root);

async function generate() {
  const pkg = JSON.parse(await readFile(new URL("node_modules/jsonc-parser/package.json", root), "utf8"));
  const result = await build({
    entryPoints: [new URL("node_modules/jsonc-parser/lib/esm/main.js", root).pathname],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    write: false,
    logLevel: "warning",
  });
  const header = [
    '// @ts-self-types="../node_modules/jsonc-parser/lib/esm/main.d.ts"',
    `// jsonc-parser ${pkg.version} (MIT License, Copyright (c) Microsoft Corporation), its lib/esm build`,
    "// bundled into one ES module for Deno by scripts/vendor-jsonc.mjs. Generated: do not edit.",
    "",
  ].join("\n");
  return header + result.outputFiles[0].text;
}

const text = await generate();
if (process.argv.includes("--check")) {
  const current = await readFile(OUTPUT, "utf8").catch(() => null);
  if (current !== text) {
    process.stderr.write("runtime/jsonc-parser.deno.mjs is stale: run `node scripts/vendor-jsonc.mjs`\n");
    process.exit(1);
  }
} else {
  await writeFile(OUTPUT, text);
}
