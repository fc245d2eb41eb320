#!/usr/bin/env node
/**
 * Writes docs/schema/ from the wire's valibot schemas (src/protocol/json-schema.ts),
 * the same documents `magi-code schema` prints.
 *
 *   node scripts/gen-wire-schemas.mjs          # rewrite docs/schema/
 *   node scripts/gen-wire-schemas.mjs --check  # exit 1 if any file is stale, missing or extra
 *
 * Only `*.schema.json` files are generated; docs/schema/README.md is written
 * by hand and left alone.
 *
 * Run `npm run build` first: the schemas are imported from the tsc output in
 * dist/, so this script stays plain Node with no TypeScript loader.
 *
 * @module
 */

import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { wireSchemas } from "../dist/src/protocol/json-schema.js";

const OUTPUT = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "schema");

async function existing(directory) {
  const found = [];
  let entries = [];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (error?.code !== "ENOENT") throw error;
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...await existing(path));
    else if (entry.name.endsWith(".schema.json")) found.push(relative(OUTPUT, path).split("\\").join("/"));
  }
  return found;
}

async function main(args) {
  const check = args.includes("--check");
  if (args.some((arg) => arg !== "--check")) {
    process.stderr.write("usage: gen-wire-schemas.mjs [--check]\n");
    return 2;
  }
  const fresh = Object.entries(wireSchemas()).map(([path, schema]) => [path, `${JSON.stringify(schema, null, 2)}\n`]);
  const wanted = new Set(fresh.map(([path]) => path));
  const extra = (await existing(OUTPUT)).filter((path) => !wanted.has(path));
  if (!check) {
    for (const path of extra) await rm(join(OUTPUT, path));
    for (const [path, text] of fresh) {
      await mkdir(dirname(join(OUTPUT, path)), { recursive: true });
      await writeFile(join(OUTPUT, path), text);
    }
    return 0;
  }
  const stale = [...extra];
  for (const [path, text] of fresh) {
    const current = await readFile(join(OUTPUT, path), "utf8").catch(() => null);
    if (current !== text) stale.push(path);
  }
  if (stale.length === 0) return 0;
  process.stderr.write(`docs/schema/ is out of date (${stale.join(", ")}); run \`npm run build && node scripts/gen-wire-schemas.mjs\`\n`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
