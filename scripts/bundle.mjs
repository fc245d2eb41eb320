#!/usr/bin/env node
// Bundles the Node entry point, runtime/node.ts, into the npm `bin`,
// dist/magi-code.cjs, and its ES-module twin dist/magi-code.mjs (the path
// earlier releases documented; same behaviour). Node 20 has no compile cache
// and pays per module for resolution: the code `initialize` needs is one
// tree-shaken CommonJS file, dist/chunks/startup.cjs, and everything only a
// ready child's requests need (its workers, provider clients, tools, re2js)
// sits in ES-module chunks under dist/chunks/, loaded by `import()` on first
// use, so cold start does not parse it (the start-up budget in
// docs/architecture.md). Deno runs the sources.
//
// Why the start-up half is CommonJS: an ES-module main file makes Node 20
// load its ES-module loader (about 4 ms of every start, bench/README.md,
// where Node 22 and later pay nothing); a CommonJS main reaches the answer
// without it, and the loader comes in with the first lazy chunk. Each lazy
// chunk takes the start-up modules from startup.cjs (a proxy module per
// start-up source reads them off its `module.exports`), so both halves
// share one instance of every module; npm packages the lazy code uses are
// bundled into the lazy chunks as they need them.
//
// It also writes dist/cjs/, the CommonJS twin of `magi-code/client` that the
// package's `require` condition (and `typesVersions`, for TypeScript's
// `node10` resolution) points a CommonJS project at, such as a VS Code
// extension generated with `module: node16` (see docs/client.md).
import { build } from "esbuild";
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist");
const STARTUP = "chunks/startup.cjs";

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  // Whitespace and syntax only (names stay, so stack traces keep them): Node 20 has no compile
  // cache and parses every byte of startup.cjs at every start; 234 KB → 166 KB was ~3 ms of a start.
  minifyWhitespace: true,
  minifySyntax: true,
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

// The module graph: what runtime/node-main.ts reaches by static imports is the start-up half.
const graph = await build({ ...common, entryPoints: [join(root, "runtime", "node.ts")], outdir, format: "esm", splitting: true, write: false });
const inputsOf = graph.metafile.inputs;
const startup = staticClosure(inputsOf, "runtime/node-main.ts");
const anchored = [...startup].filter(ownSource).sort();
// Every own module some code loads by import(), unless start-up code has it anyway: the lazy half's entries.
const lazyEntries = [...new Set(
  Object.values(inputsOf).flatMap(({ imports }) =>
    imports.filter((edge) => edge.kind === "dynamic-import" && !edge.external && ownSource(edge.path) && !startup.has(edge.path)).map((edge) => edge.path)
  ),
)].sort();
// Each start-up module's own export names (a module's `export * from` names are those of a module listed too).
const unbundled = await build({ entryPoints: anchored, outdir: "/", bundle: false, format: "esm", write: false, metafile: true, absWorkingDir: root, logLevel: "warning" });
const exportsOf = new Map(Object.values(unbundled.metafile.outputs).map(({ entryPoint, exports }) => [entryPoint, exports]));
const exported = (path, name) => `m${anchored.indexOf(path)}_${name}`;

// Chunk names carry content hashes; stale ones from earlier builds would pile up.
await rm(join(outdir, "chunks"), { recursive: true, force: true });

// The lazy half: ES modules whose imports of a start-up module read it off startup.cjs.
const startupProxy = {
  name: "startup-proxy",
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir, namespace }) => {
      if (namespace !== "file" && namespace !== "startup-proxy") return undefined;
      const source = relative(root, resolve(resolveDir, path));
      return startup.has(source) && ownSource(source) ? { path: source, namespace: "startup-proxy" } : undefined;
    });
    // startup.cjs by require(), which returns the instance the bin loaded; an import of it would run
    // the ES-module loader's CommonJS translator, which on Node 20 and 22 lexes all of it (~35 ms).
    plugin.onResolve({ filter: /^magi-code:startup$/ }, () => ({ path: "startup", namespace: "startup-require" }));
    plugin.onLoad({ filter: /.*/, namespace: "startup-require" }, () => ({ contents: requireStartup(`./${basename(STARTUP)}`), loader: "js" }));
    plugin.onLoad({ filter: /.*/, namespace: "startup-proxy" }, async ({ path }) => {
      const source = await readFile(join(root, path), "utf8");
      // Read at import, after start-up has evaluated every export, so a binding start-up reassigns
      // later (a top-level `let` or `var` it exports) would stay stale here: the build refuses one.
      const reassignable = exportsOf.get(path).filter((name) => new RegExp(`^(?:export\\s+)?(?:let|var)\\s+${name.replace(/\$/g, "\\$")}(?![\\w$])`, "m").test(source));
      if (reassignable.length > 0) throw new Error(`${path} exports ${reassignable.join(", ")} as let or var, which lazy code would read stale: export a const, or a function that reads it`);
      return {
        contents: [
          'import startup from "magi-code:startup";',
          ...exportsOf.get(path).map((name) =>
            name === "default" ? `export default startup.${exported(path, name)};` : `export const ${name} = startup.${exported(path, name)};`
          ),
          // `export * from` names are another start-up module's, which its own proxy gives.
          ...[...source.matchAll(/^export \* from ("[^"]+");$/gm)].map(([, from]) => `export * from ${from};`),
        ].join("\n"),
        resolveDir: dirname(join(root, path)),
        loader: "js",
      };
    });
  },
};
const lazy = await build({
  ...common,
  entryPoints: lazyEntries.map((path) => join(root, path)),
  outdir,
  outExtension: { ".js": ".mjs" },
  entryNames: "chunks/[name]-[hash]",
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  format: "esm",
  plugins: [startupProxy],
});
// A start-up module inside a lazy chunk would be a second instance of it (its classes, its state).
const doubled = Object.entries(lazy.metafile.outputs).flatMap(([file, { inputs }]) => Object.keys(inputs).filter((path) => startup.has(path) && ownSource(path)).map((path) => `${path} in ${file}`));
if (doubled.length > 0) throw new Error(`Lazy chunks hold start-up modules of their own:\n${doubled.join("\n")}`);
const lazyOutput = new Map(
  Object.entries(lazy.metafile.outputs).filter(([, { entryPoint }]) => entryPoint !== undefined).map(([file, { entryPoint }]) => [entryPoint, file]),
);

// The start-up half: one CommonJS file exporting every start-up module's exports under a name of
// its own (`m<index>_<name>`) and `start`; its import() calls name the lazy half's entry chunks.
const startupEntry = {
  name: "startup-entry",
  setup(plugin) {
    plugin.onResolve({ filter: /^magi-code:startup-entry$/ }, () => ({ path: "startup-entry", namespace: "startup-entry" }));
    plugin.onLoad({ filter: /.*/, namespace: "startup-entry" }, () => ({
      contents: [
        'export { start } from "./runtime/node-main.ts";',
        ...anchored
          .filter((path) => exportsOf.get(path).length > 0)
          .map((path) => `export { ${exportsOf.get(path).map((name) => `${name} as ${exported(path, name)}`).join(", ")} } from ${JSON.stringify(`./${path}`)};`),
      ].join("\n"),
      resolveDir: root,
      loader: "js",
    }));
    // A built-in module stays an import(); a start-up module is in this file anyway.
    plugin.onResolve({ filter: /^\.\.?\// }, ({ kind, path, resolveDir }) => {
      const target = relative(root, resolve(resolveDir, path));
      if (kind !== "dynamic-import" || startup.has(target)) return undefined;
      const file = lazyOutput.get(target);
      if (file === undefined) throw new Error(`Start-up code imports ${path} lazily, which the lazy half has no entry for`);
      return { path: `./${relative(dirname(STARTUP), relative("dist", file))}`, external: true };
    });
  },
};
const startupBuild = await build({
  ...common,
  entryPoints: { startup: "magi-code:startup-entry" },
  outfile: join(outdir, STARTUP),
  format: "cjs",
  // runtime/node-builtin.ts makes a require() from its own URL on Node releases before 20.16.
  define: { "import.meta.url": "__magiCodeFileUrl" },
  banner: { js: 'const __magiCodeFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [startupEntry],
});

// The two entries, from runtime/node.ts: its import() of node-main.ts names startup.cjs, which the
// CommonJS bin loads by require() (no ES-module loader before the answer) and the .mjs by a
// require() made for its own URL, which keeps startup.cjs out of the ES-module loader (see startupProxy).
const entry = (format) => ({
  name: "entry",
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/node-main\.ts$/ }, () =>
      format === "cjs" ? { path: `./${STARTUP}`, external: true } : { path: "node-main", namespace: "startup-require" }
    );
    plugin.onLoad({ filter: /.*/, namespace: "startup-require" }, () => ({ contents: requireStartup(`./${STARTUP}`), loader: "js" }));
  },
});
const entries = [];
for (const [format, file] of [["cjs", "magi-code.cjs"], ["esm", "magi-code.mjs"]]) {
  entries.push(await build({
    ...common,
    entryPoints: [join(root, "runtime", "node.ts")],
    outfile: join(outdir, file),
    format,
    supported: format === "cjs" ? { "dynamic-import": false } : {},
    plugins: [entry(format)],
  }));
  await chmod(join(outdir, file), 0o755);
}

// Which sources each output file holds, for the start-up budget test (tests/startup-budget.test.ts),
// which names the modules a loaded file brings; not shipped (package.json `files`).
const inputs = Object.fromEntries(
  [lazy, startupBuild, ...entries].flatMap((result) => Object.entries(result.metafile.outputs))
    .map(([file, { inputs }]) => [relative(outdir, join(root, file)), Object.keys(inputs).filter((path) => !path.includes(":"))]),
);
await writeFile(join(outdir, "bundle-inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);

// The CommonJS client: one file, so `require()` never meets an ES module (Node
// before 20.19 and older Electron hosts cannot load one). Dependencies stay
// external: valibot ships a CommonJS build of its own. Its `binPath` comes
// from `import.meta.url`, which a CommonJS file lacks; dist/cjs/client.js sits
// one level under dist/ like dist/runtime/node-client.js, so the same
// relative URL finds dist/magi-code.cjs from this file's own URL.
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

/** An ES module whose default export (and `start`) is startup.cjs, required from `path` beside the importing file. */
function requireStartup(path) {
  return `import { createRequire } from "node:module";\nconst startup = createRequire(import.meta.url)(${JSON.stringify(path)});\nexport default startup;\nexport const start = startup.start;\n`;
}

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
