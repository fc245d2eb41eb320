/**
 * The package as a user gets it, for the tests of what `npm pack` ships: the
 * repository's files (tracked and not ignored, as a fresh clone would have
 * them plus this checkout's uncommitted work) are copied to a temp
 * directory, packed there (so `prepack` must build; nothing from this
 * checkout's dist/ can leak in), and the tarball is installed offline (the
 * tarball plus the npm cache `npm ci` filled) into a new project.
 *
 * Packing in the copy, not here, also keeps its tsc run from rewriting the
 * dist/ other test files are importing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { repoRoot } from "./processes.ts";

/** Runs `command` and fails with its output unless it exits 0; returns its stdout. */
export function must(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...env, npm_config_update_notifier: "false" } });
  assert.equal(result.status, 0, `${command} ${args.join(" ")} in ${cwd} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Copies what a clone of this checkout holds into `target`, node_modules linked rather than copied. */
function cleanCopy(target: string): void {
  const root = repoRoot();
  const files = must("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root).split("\0").filter((file) => file !== "");
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(root, file), join(target, file));
  }
  symlinkSync(join(root, "node_modules"), join(target, "node_modules"), "dir");
}

/**
 * Where a package at lockfile key `from` finds its dependency `name`, as
 * Node resolves it: in its own `node_modules`, else in each enclosing one,
 * else at the top (`node_modules/name`). A dependency whose version differs
 * from the hoisted one is nested (the MCP SDK's server side brings several).
 */
function resolvedKey(lock: Record<string, Record<string, any>>, from: string, name: string): string {
  for (let base = from; base !== ""; base = base.includes("/node_modules/") ? base.slice(0, base.lastIndexOf("/node_modules/")) : "") {
    const key = `${base}/node_modules/${name}`;
    if (key in lock) return key;
  }
  return `node_modules/${name}`;
}

/**
 * A lockfile for an app with `dependencies`: the tarball and packages of
 * this repository's lockfile `lock` (such as `@types/node`). magi-code's
 * runtime dependencies, those packages and theirs are copied from it,
 * with their integrity hashes, so `npm ci --offline` takes them
 * from the cache `npm ci` filled here. A plain `npm install <tarball>` would
 * need each dependency's registry metadata, which that cache does not hold.
 */
function appLockfile(dependencies: Record<string, string>, integrity: string, pkg: Record<string, any>, lock: Record<string, Record<string, any>>): unknown {
  const tarballRef = dependencies["magi-code"]!;
  const packages: Record<string, unknown> = {
    "": { name: "app", dependencies },
    "node_modules/magi-code": {
      version: pkg.version,
      resolved: tarballRef,
      integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
    },
  };
  const queue = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(dependencies).filter((name) => name !== "magi-code")].map((name) => `node_modules/${name}`);
  for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
    if (key in packages) continue;
    const entry = lock[key];
    assert.ok(entry !== undefined, `${key} is in package-lock.json`);
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    packages[key] = kept;
    queue.push(...Object.keys(entry.dependencies ?? {}).map((name) => resolvedKey(lock, key, name)));
  }
  return { name: "app", lockfileVersion: 3, requires: true, packages };
}

/** A packed and installed magi-code. */
export interface Packed {
  /** The built copy of this checkout the tarball was packed from. */
  readonly clone: string;
  /** The tarball. */
  readonly tarball: string;
  /** The files it ships, relative to the package root. */
  readonly shipped: readonly string[];
  /** The app (an ES module project) that installed it: `<app>/node_modules/magi-code`. */
  readonly app: string;
}

/** Copies, builds, packs and installs magi-code under `scratch`, with `extra` lockfile packages beside it in the app. */
export function packAndInstall(scratch: string, extra: readonly string[] = []): Packed {
  const clone = join(scratch, "clone");
  cleanCopy(clone);
  const packs = join(scratch, "packs");
  mkdirSync(packs);
  must("npm", ["pack", "--pack-destination", packs], clone);
  const tarball = join(packs, readdirSync(packs).find((name) => name.endsWith(".tgz"))!);
  const shipped = must("tar", ["-tzf", tarball], scratch).split("\n").filter((line) => line !== "" && !line.endsWith("/")).map((line) => line.replace(/^package\//, ""));
  const app = join(scratch, "app");
  mkdirSync(app);
  const ref = `file:../packs/${tarball.slice(packs.length + 1)}`;
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const pkg = JSON.parse(readFileSync(join(clone, "package.json"), "utf8"));
  const lock = JSON.parse(readFileSync(join(repoRoot(), "package-lock.json"), "utf8")).packages as Record<string, Record<string, any>>;
  const dependencies = { "magi-code": ref, ...Object.fromEntries(extra.map((name) => [name, lock[`node_modules/${name}`]!.version as string])) };
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "app", private: true, type: "module", dependencies })}\n`);
  writeFileSync(join(app, "package-lock.json"), `${JSON.stringify(appLockfile(dependencies, integrity, pkg, lock), null, 2)}\n`);
  must("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app);
  return { clone, tarball, shipped, app };
}
