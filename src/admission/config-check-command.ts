/**
 * The `magi-code config check` command line: prints every configuration
 * problem as `<file>: <JSON path>: <message>`, one a line, and exits 1 when
 * there is any, so scripts and clients can run it after `initialize`
 * answered `configuration_invalid` and show the person what to fix. Notes
 * (enabled MCP servers that will not start, skills that are skipped or
 * shadowed) follow in the same form and do not change the exit code: startup
 * skips such servers and skills. No line carries a
 * value from a file: values may be keys. Names a repository chose (a skill
 * directory, a profile file, a JSON key) reach the terminal with their
 * controls, bidi and invisible characters escaped, so a name cannot move the
 * cursor, reorder the line or hide part of it.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { escapeInvisible } from "../util/invisible.ts";
import { checkConfiguration, type FileProblem } from "./config-check.ts";

const encoder = new TextEncoder();

/** Runs the check and prints its report; resolves with the exit code (0 clean, 1 problems or output failure). */
export async function configCheckCommand(runtime: Runtime): Promise<number> {
  const report = await checkConfiguration(runtime);
  // The message too: some name a second file (a shadowing skill) or a profile a settings value chose.
  const line = (problem: FileProblem) => escapeInvisible(`${problem.file}: ${problem.path}: ${problem.message}`);
  const lines = report.problems.length === 0
    ? [
      ...report.notes.map(line),
      `magi-code config check: no problems (${report.checked.length === 0 ? "no configuration files; defaults apply" : report.checked.map(escapeInvisible).join(", ")})`,
    ]
    : [...report.problems, ...report.notes].map(line);
  try {
    await runtime.stdout.write(encoder.encode(`${lines.join("\n")}\n`));
  } catch {
    return 1;
  }
  return report.problems.length === 0 ? 0 : 1;
}
