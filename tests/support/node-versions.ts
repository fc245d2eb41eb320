/**
 * The Node versions magi-code is tested on: the Node that runs the tests
 * (20, what CI has) and Node 22 and 24 from the npm `node` package, through
 * scripts/npm-node.mjs (the one place that installs them, shared with
 * .ci/run). An install that fails fails the test loudly instead of quietly
 * testing fewer versions.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { nodeBinary, repoRoot } from "./processes.ts";

/** One Node binary to run magi-code with. */
export interface NodeVersion {
  /** `20`, `22`, `24`. */
  readonly major: number;
  /** The binary. */
  readonly path: string;
}

/** The majors installed from the npm `node` package, besides the one running the tests. */
export const EXTRA_MAJORS: readonly number[] = Object.freeze([22, 24]);

/** The Node binary of `major` from the npm `node` package, installed on first use. */
export function npmNode(major: number): string {
  const result = spawnSync(nodeBinary(), [join(repoRoot(), "scripts", "npm-node.mjs"), String(major)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`scripts/npm-node.mjs ${major} failed:\n${result.stderr}`);
  return result.stdout.trim();
}

/** The major version of the Node binary at `path`. */
export function majorOf(path: string): number {
  const result = spawnSync(path, ["--version"], { encoding: "utf8" });
  const match = /^v(\d+)\./.exec(result.stdout);
  if (match === null) throw new Error(`${path} --version printed ${JSON.stringify(result.stdout)}`);
  return Number(match[1]);
}

/** The Node running (or, under Deno, on PATH for) the tests, then 22 and 24 from the npm `node` package. */
export function nodeVersions(): NodeVersion[] {
  const own = nodeBinary();
  const versions: NodeVersion[] = [{ major: majorOf(own), path: own }];
  for (const major of EXTRA_MAJORS) {
    if (versions.some((version) => version.major === major)) continue;
    versions.push({ major, path: npmNode(major) });
  }
  return versions;
}
