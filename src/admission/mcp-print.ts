/**
 * Output of the `magi-code mcp` commands: lines on stdout, a failure on
 * stderr prefixed with the command's name.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";

const encoder = new TextEncoder();

/** Writes `lines` to stdout (or stderr); false when that fails. */
export async function print(runtime: Runtime, lines: readonly string[], to: "stdout" | "stderr" = "stdout"): Promise<boolean> {
  try {
    await runtime[to].write(encoder.encode(`${lines.join("\n")}\n`));
    return true;
  } catch {
    return false;
  }
}

/** Prints `line` as the command's failure on stderr; resolves with exit code 1. */
export async function refuse(runtime: Runtime, line: string): Promise<number> {
  await print(runtime, [`magi-code mcp: ${line}`], "stderr");
  return 1;
}

