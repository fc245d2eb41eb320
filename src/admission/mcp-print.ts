/**
 * Output of the `magi-code mcp` and `magi-code hooks` commands: lines on
 * stdout, a failure on stderr prefixed with the command's name, and the
 * answer typed to an approval question.
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

/** Prints `line` as the failure of `magi-code <command>` on stderr; resolves with exit code 1. */
export async function refuse(runtime: Runtime, line: string, command: "mcp" | "hooks" = "mcp"): Promise<number> {
  await print(runtime, [`magi-code ${command}: ${line}`], "stderr");
  return 1;
}

/** The first line typed on the terminal, trimmed and lower-cased; "" at end of input. */
export async function readAnswer(runtime: Runtime): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const chunk = await runtime.stdin.read().catch(() => null);
    if (chunk === null) break;
    text += decoder.decode(chunk, { stream: true });
    // Only the first line counts, and a question's answer is short: stop reading either way.
    if (text.includes("\n") || text.length > 256) break;
  }
  runtime.stdin.close();
  return text.split("\n")[0]!.trim().toLowerCase();
}


