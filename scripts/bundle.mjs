#!/usr/bin/env node
// Bundles the Node entry point into dist/magi-code.mjs, the npm `bin`. Node 20
// has no compile cache and pays per module for resolution and (for
// jsonc-parser's UMD build) its CommonJS loader: one tree-shaken file starts
// about 30 ms faster (see bench/README.md). Code splitting keeps what only a
// ready child's requests need (its workers, then provider clients, tools,
// re2js) in chunks under dist/chunks/, loaded by dynamic imports on first use,
// so cold start does not parse it (the start-up budget in
// docs/architecture.md). Deno runs the sources.
//
// It also writes dist/cjs/, the CommonJS twin of `magi-code/client` that the
// package's `require` condition (and `typesVersions`, for TypeScript's
// `node10` resolution) points a CommonJS project at, such as a VS Code
// extension generated with `module: node16` (see docs/client.md).
import { build } from "esbuild";
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist");

const options = {
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
  // yaml's `node` build is CommonJS and requires `process` at run time, which an ESM bundle cannot
  // do either; its browser build is the same parser as ES modules, without that logging hook.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js", yaml: "./node_modules/yaml/browser/index.js" },
  logLevel: "warning",
  metafile: true,
  // The metafile's paths are relative to this, whatever directory the script runs from.
  absWorkingDir: root,
};

// esbuild gives each set of entry points (the bin and every import() target) that reaches a piece of
// code a chunk of its own, and it does not know that a lazy chunk only ever loads after the start-up
// graph: so the code start-up needs came in as many files as there are sets of lazy chunks sharing
// parts of it (26 files for 66 modules). Each file costs Node a resolution, a module record and a
// link; together they also made path normalisation hot enough for V8 to start its optimizing
// compiler before the answer, which touched ~3.5 MiB more of the node binary (bench/README.md).
// Every lazy entry of ours therefore re-exports every export of the start-up modules (by name: a
// namespace object per module would be built at start-up, in the chunk of its module), so all of
// their code is reached by the same set of entries and lands in one chunk; the re-exports live in a
// lazy chunk.
const ANCHOR = "magi-code:startup-anchor";
const graph = await build({ ...options, write: false });
const startup = staticClosure(graph.metafile.inputs, "runtime/node-main.ts");
const lazyEntries = new Set(
  Object.values(graph.metafile.inputs).flatMap(({ imports }) =>
    imports.filter((edge) => edge.kind === "dynamic-import" && !edge.external && ownSource(edge.path) && edge.path !== "runtime/node-main.ts").map((edge) => edge.path)
  ),
);
const anchored = [...startup].filter((path) => ownSource(path) && path !== "runtime/node-main.ts").sort();
// Each module's own export names (a module's `export * from` names are those of a module listed too).
const unbundled = await build({ entryPoints: anchored, outdir: "/", bundle: false, format: "esm", write: false, metafile: true, absWorkingDir: root, logLevel: "warning" });
const exportsOf = new Map(Object.values(unbundled.metafile.outputs).map(({ entryPoint, exports }) => [entryPoint, exports]));
const startupAnchor = {
  name: "startup-anchor",
  setup(plugin) {
    plugin.onResolve({ filter: /^magi-code:startup-anchor$/ }, () => ({ path: ANCHOR, namespace: "startup-anchor" }));
    plugin.onLoad({ filter: /.*/, namespace: "startup-anchor" }, () => ({
      contents: anchored
        .filter((path) => exportsOf.get(path).length > 0)
        .map((path, index) => `export { ${exportsOf.get(path).map((name) => `${name} as m${index}_${name}`).join(", ")} } from ${JSON.stringify(join(root, path))};`)
        .join("\n"),
      resolveDir: root,
      loader: "js",
    }));
    plugin.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
      if (!lazyEntries.has(relative(root, path))) return undefined;
      const source = await readFile(path, "utf8");
      return { contents: `${source}\nexport * as __magiCodeStartup from "${ANCHOR}";\n`, loader: "ts" };
    });
  },
};

// Chunk names carry content hashes; stale ones from earlier builds would pile up.
await rm(join(outdir, "chunks"), { recursive: true, force: true });
const built = await build({ ...options, plugins: [startupAnchor] });
await chmod(join(outdir, "magi-code.mjs"), 0o755);
// Which sources each output file holds, for the start-up budget test (tests/startup-budget.test.ts),
// which names the modules a loaded chunk brings; not shipped (package.json `files`).
const inputs = Object.fromEntries(
  Object.entries(built.metafile.outputs).map(([file, { inputs }]) => [relative(outdir, join(root, file)), Object.keys(inputs)]),
);
await writeFile(join(outdir, "bundle-inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);

// The CommonJS client: one file, so `require()` never meets an ES module (Node
// before 20.19 and older Electron hosts cannot load one). Dependencies stay
// external: valibot ships a CommonJS build of its own. Its `binPath` comes
// from `import.meta.url`, which a CommonJS file lacks; dist/cjs/client.js sits
// one level under dist/ like dist/runtime/node-client.js, so the same
// relative URL finds dist/magi-code.mjs from this file's own URL.
const cjs = join(outdir, "cjs");
await rm(cjs, { recursive: true, force: true });
await build({
  entryPoints: { client: join(root, "runtime", "node-client.ts") },
  outdir: cjs,
  bundle: true,
  packages: "external",
  platform: "node",
  format: "cjs",
  target: "node20",
  legalComments: "inline",
  define: { "import.meta.url": "__magiCodeFileUrl" },
  banner: { js: 'const __magiCodeFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});
await writeFile(join(cjs, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);

// Its types: the declaration files tsc wrote for runtime/node-client.ts and
// everything they import, copied under dist/cjs/ so that the package.json
// above makes TypeScript read them as CommonJS. The originals sit in a
// `"type": "module"` package, where a CommonJS importer gets TS1479.
const RELATIVE = /(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.\.?\/[^"']+)["']/g;
const copied = new Set();
async function copyDeclarations(path) {
  if (copied.has(path)) return;
  copied.add(path);
  const text = await readFile(join(outdir, path), "utf8");
  await mkdir(dirname(join(cjs, path)), { recursive: true });
  await copyFile(join(outdir, path), join(cjs, path));
  for (const [, specifier] of text.matchAll(RELATIVE)) {
    await copyDeclarations(join(dirname(path), specifier.replace(/\.(?:ts|js)$/, ".d.ts")));
  }
}
await copyDeclarations(join("runtime", "node-client.d.ts"));

/** Whether a metafile input path is one of ours rather than a package's. */
function ownSource(path) {
  return !path.includes("node_modules/");
}

/** The inputs `entry` reaches through static imports in esbuild's metafile `inputs`, itself included. */
function staticClosure(inputs, entry) {
  const reached = new Set();
  const pending = [entry];
  while (pending.length > 0) {
    const path = pending.pop();
    if (reached.has(path)) continue;
    reached.add(path);
    for (const edge of inputs[path].imports) if (edge.kind === "import-statement" && !edge.external) pending.push(edge.path);
  }
  return reached;
}
