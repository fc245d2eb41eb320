/**
 * The `magi-code config check` command line: prints every configuration
 * problem as `<file>: <JSON path>: <message>`, one a line, and exits 1 when
 * there is any, so scripts and clients can run it after `initialize`
 * answered `configuration_invalid` and show the person what to fix. Notes
 * (enabled MCP servers that will not start, skills that are skipped or
 * shadowed) follow in the same form and do not change the exit code: startup
 * skips such servers and skills. No line carries a
 * value from a file: values may be keys.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { checkConfiguration, type FileProblem } from "./config-check.ts";

const encoder = new TextEncoder();

/** Runs the check and prints its report; resolves with the exit code (0 clean, 1 problems or output failure). */
export async function configCheckCommand(runtime: Runtime): Promise<number> {
  const report = await checkConfiguration(runtime);
  const line = (problem: FileProblem) => `${problem.file}: ${problem.path}: ${problem.message}`;
  const lines = report.problems.length === 0
    ? [
      ...report.notes.map(line),
      `magi-code config check: no problems (${report.checked.length === 0 ? "no configuration files; defaults apply" : report.checked.join(", ")})`,
    ]
    : [...report.problems, ...report.notes].map(line);
  try {
    await runtime.stdout.write(encoder.encode(`${lines.join("\n")}\n`));
  } catch {
    return 1;
  }
  return report.problems.length === 0 ? 0 : 1;
}
