#!/usr/bin/env node
// Builds dist/magi-code-linux-x64, a Node single-executable application
// (https://nodejs.org/api/single-executable-applications.html): one file that
// runs `magi-code serve --stdio` with no Node installed and no network, which
// this machine can build and test offline (a `deno compile` binary needs a
// `denort` download). Steps: bundle runtime/node.ts again, this time as one
// CommonJS file with every lazy chunk inlined (a SEA runs exactly one CJS
// script and its `require` sees only built-in modules), have Node write the
// preparation blob (`--experimental-sea-config`), and inject it into a copy of
// the Node binary with postject, the Node project's own injector (what the
// Node documentation uses; it writes the NODE_SEA_BLOB resource and flips the
// NODE_SEA_FUSE sentinel the Node binary checks at start-up).
//
// The Node binary is Node 22 from the npm `node` package
// (scripts/npm-node.mjs, cached under node_modules/.cache/magi-node/22): a
// maintained LTS, an official build (which carries the SEA fuse; distribution
// builds may not), and the same bytes on every machine that installs it,
// unlike whatever `node` is on PATH. `SEA_NODE=/path/to/node` overrides it;
// the blob is always made by that same binary, since a blob only runs in the
// Node version that wrote it.
//
//   node scripts/build-sea.mjs        # → dist/magi-code-linux-x64 (+ its script, dist/magi-code-linux-x64.cjs)
//   node scripts/build-sea.mjs --if-stale   # skip when the binary is newer than every input
//
// Linux x64 only: elsewhere it prints that it skipped and exits 0.
import { build, transform } from "esbuild";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const output = join(root, "dist", "magi-code-linux-x64");
const work = join(root, "dist", "sea");

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`SKIPPED the Node single executable: it is built for Linux x64 only, and this host is ${process.platform}-${process.arch}`);
  process.exit(0);
}

function newest(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

if (process.argv.includes("--if-stale") && existsSync(output) && existsSync(`${output}.cjs`)) {
  const inputs = ["src", "runtime", "package-lock.json", "scripts/build-sea.mjs"].map((path) => newest(join(root, path)));
  if (statSync(output).mtimeMs > Math.max(...inputs)) process.exit(0);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) {
    console.error(`${command} ${args.join(" ")} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
    process.exit(1);
  }
  return result.stdout.trim();
}

const node = process.env.SEA_NODE || run(process.execPath, [join(root, "scripts", "npm-node.mjs"), "22"]);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const script = join(work, "magi-code.cjs");
await build({
  // runtime/node.ts without the compile cache, which a SEA's code cache (below) replaces.
  stdin: {
    contents: 'import { start } from "./runtime/node-main.ts";\nvoid start();',
    resolveDir: root,
    sourcefile: "sea-entry.ts",
    loader: "ts",
  },
  outfile: script,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Every import() esbuild cannot inline (a built-in module's, ours or a package's) becomes a
  // require(), which a SEA serves for built-ins: see the check below.
  supported: { "dynamic-import": false },
  // The sandbox host's QuickJS build (only `magi-code sandbox-host` loads it) makes a require()
  // from import.meta.url under Node; a CommonJS script has none, so it gets the executable's URL
  // (that require() only ever loads built-in modules).
  define: { "import.meta.url": "__magiSeaUrl" },
  banner: { js: 'const __magiSeaUrl = require("node:url").pathToFileURL(process.execPath).href;' },
  legalComments: "inline",
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  logLevel: "warning",
});

// useCodeCache: the blob carries V8's code cache for the script, so a start compiles nothing
// (~8 ms and 1 MiB less per start, bench/README.md). A script compiled from that cache has no
// dynamic-import callback on Node 20, where any import() fails with
// ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING (Node 22 serves it). So the bundle must hold none: esbuild
// inlines our chunks and lowers the rest to require(), and the build fails if one is left (the
// comments stripped first, since JSDoc types spell `import(…)`; an empty `import()` is no call, only text
// in QuickJS's embedded error messages). The script is kept beside the
// executable (dist/magi-code-linux-x64.cjs), where tests/sea.test.ts checks it too.
const code = (await transform(readFileSync(script, "utf8"), { minifyWhitespace: true, legalComments: "none", loader: "js" })).code;
const left = [...code.matchAll(/.{0,60}\bimport\s*\((?!\s*\)).{0,60}/g)].map(([text]) => text);
if (left.length > 0) {
  console.error(`${script} still calls import(), which a code-cached Node 20 executable cannot serve:\n${left.join("\n")}`);
  process.exit(1);
}
const blob = join(work, "sea-prep.blob");
writeFileSync(
  join(work, "sea-config.json"),
  `${JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }, null, 2)}\n`,
);
run(node, ["--experimental-sea-config", join(work, "sea-config.json")]);

const staged = join(work, "magi-code-linux-x64");
copyFileSync(node, staged);
chmodSync(staged, 0o755);
run(process.execPath, [
  join(root, "node_modules", "postject", "dist", "cli.js"),
  staged,
  "NODE_SEA_BLOB",
  blob,
  "--sentinel-fuse",
  "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
]);
// Moved into place last, so an interrupted build never leaves a half-made binary at the output path.
copyFileSync(script, `${output}.cjs`);
copyFileSync(staged, output);
chmodSync(output, 0o755);
rmSync(work, { recursive: true, force: true });
console.log(`${output} (${(statSync(output).size / 1048576).toFixed(1)} MiB, Node ${run(node, ["--version"])})`);
