/**
 * `magi-code config check`: every problem that would make `initialize`
 * fail with `configuration_invalid`, `profile_invalid` or
 * `provider_unavailable`, each with
 * the file and the JSON path where it is. The wire error is a bare code by
 * design (errors never echo input or paths); this command is where a person
 * learns what to fix. It reads what startup reads, in the same order and
 * with the same rules, but creates nothing: no storage root, no lease.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { isRuntimeError, RuntimeErrorCode, type Runtime } from "../host/runtime.ts";
import { CREDENTIALS_FILE, type Credentials, loadCredentials, MAX_CREDENTIALS_BYTES } from "../config/credentials.ts";
import { catalogProblems } from "./catalog-problems.ts";
import { instructionNotes, instructionPathProblems } from "./instructions-problems.ts";
import { mcpApprovalNotes, mcpMergeOf } from "./mcp-problems.ts";
import type { ConfiguredMcpServer } from "../config/mcp-merge.ts";
import { exposedToolName } from "../mcp/names.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import { jsonPath } from "../util/json-path.ts";
import { hookApprovalNotes } from "./hooks-problems.ts";
import { profileProblems } from "./profile-problems.ts";
import { projectEndpointsTrusted, projectToolsTrusted } from "../config/project-trust.ts";
import { type CodeModeSettings, codeModeEnabled, codeModeLoosenings, directDeniesOpenToCode, mergeCodeModeSettings, parseCodeModeSettings } from "../config/code-mode-settings.ts";
import { resolveEndpoints, resolveSelection } from "../config/providers.ts";
import {
  GLOBAL_SETTINGS_FILE,
  MAX_SETTINGS_BYTES,
  mergeSettings,
  parseSettingsText,
  PROJECT_SETTINGS_PATH,
  type Settings,
} from "../config/settings.ts";
import { joinPath } from "../util/paths.ts";
import { parseSkillsSettings } from "../config/skills-settings.ts";
import { type Problem, settingsProblems } from "./settings-problems.ts";
import { skillNotes } from "./skill-problems.ts";
import { resolveHome } from "./startup.ts";

/** One problem, located. */
export interface FileProblem extends Problem {
  /** The file (or `environment` for variables). */
  readonly file: string;
}

/** What {@link checkConfiguration} found. */
export interface ConfigReport {
  /** The files that exist and were read. */
  readonly checked: readonly string[];
  /** Every problem, in the order startup would meet them. */
  readonly problems: readonly FileProblem[];
  /** What does not fail startup but a person should know: enabled MCP servers that will not start, skipped or shadowed skills, skipped instruction files, skipped profiles. */
  readonly notes: readonly FileProblem[];
}

const SEE = "see docs/settings.md";
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Reads one settings file like startup does; `null` text when it is absent. */
async function readSettings(runtime: Runtime, path: string): Promise<{ text: string | null; problem: string | null }> {
  try {
    const target = await runtime.fs.realpath(path);
    const info = await runtime.fs.stat(target);
    if (info.kind !== "file" || info.size > MAX_SETTINGS_BYTES) return { text: null, problem: `must be a regular file of at most ${MAX_SETTINGS_BYTES} bytes` };
    return { text: decoder.decode(await runtime.fs.readFile(target, MAX_SETTINGS_BYTES)), problem: null };
  } catch (error) {
    if (isRuntimeError(error, RuntimeErrorCode.notFound)) {
      const dangling = await runtime.fs.lstat(path).then(() => true, () => false);
      return { text: null, problem: dangling ? "is a symlink to nothing" : null };
    }
    return { text: null, problem: error instanceof TypeError ? "is not valid UTF-8" : "cannot be read" };
  }
}

/** Which single project entries break the trust rule (`project-trust.ts`), as problems. */
function trustProblems(file: string, global: Settings, project: Settings): FileProblem[] {
  const out: FileProblem[] = [];
  for (const [name, endpoint] of Object.entries(project.providers?.endpoints ?? {})) {
    if (!projectEndpointsTrusted({ providers: { endpoints: { [name]: endpoint } } })) {
      out.push({
        file,
        path: `$.providers.endpoints${/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`}`,
        message: `a project file may not declare endpoints (declare it in the global file and select it with model.provider); ${SEE}`,
      });
    }
  }
  for (const [name, policy] of Object.entries(project.tools ?? {})) {
    if (!projectToolsTrusted(global, { tools: { [name]: policy } })) {
      out.push({ file, path: `$.tools.${name}`, message: `a project file may only make a tool's policy stricter (allow < ask < deny); ${SEE}` });
    }
  }
  for (const path of codeModeLoosenings(global.code_mode, project.code_mode)) {
    out.push({ file, path: `$.code_mode.${path}`, message: `a project file may only tighten Code Mode (turn it off, make a policy stricter); ${SEE}` });
  }
  return out;
}

/** Checks the configuration `runtime` would start with. */
export async function checkConfiguration(runtime: Runtime): Promise<ConfigReport> {
  const checked: string[] = [];
  const problems: FileProblem[] = [];
  const configured = resolveHome((name) => runtime.env(name));
  if (configured === null) {
    const message = runtime.env("MC_HOME") ? "MC_HOME must be an absolute path" : "HOME is unset or relative; set MC_HOME to an absolute path";
    return { checked, problems: [{ file: "environment", path: "$", message }], notes: [] };
  }
  const home = await runtime.fs.realpath(configured).catch(() => configured);
  const homeInfo = await runtime.fs.stat(home).catch(() => null);
  if (homeInfo !== null && homeInfo.kind !== "directory") problems.push({ file: home, path: "$", message: "the storage root exists but is not a directory" });
  const cwd = await runtime.fs.realpath(runtime.cwd()).catch(() => runtime.cwd());

  const credentialsPath = joinPath(home, CREDENTIALS_FILE);
  const stored = await loadCredentials(runtime.fs, credentialsPath, new AbortController().signal);
  let credentials: Credentials = new Map();
  if (stored.ok) credentials = stored.credentials;
  else {
    const message = stored.code === ErrorCode.configurationInvalid
      ? `must be an owner-only (chmod 600) regular file of at most ${MAX_CREDENTIALS_BYTES} bytes holding strict JSON {"v": 1, "keys": {"<provider>": "<key>"}}; ${SEE}`
      : "cannot be read";
    problems.push({ file: credentialsPath, path: "$", message });
  }
  if (await runtime.fs.lstat(credentialsPath).then(() => true, () => false)) checked.push(credentialsPath);

  const globalPath = joinPath(home, GLOBAL_SETTINGS_FILE);
  const projectDir = await runtime.fs.realpath(joinPath(cwd, PROJECT_SETTINGS_PATH[0]!)).catch(() => null);
  const projectPath = projectDir === home ? null : joinPath(cwd, ...PROJECT_SETTINGS_PATH);
  const layers: { file: string; settings: Settings | null; mcp?: unknown; hooks?: unknown }[] = [];
  for (const file of projectPath === null ? [globalPath] : [globalPath, projectPath]) {
    const read = await readSettings(runtime, file);
    if (read.problem !== null) problems.push({ file, path: "$", message: read.problem });
    if (read.text === null) {
      layers.push({ file, settings: read.problem === null ? {} : null });
      continue;
    }
    checked.push(file);
    const found = settingsProblems(read.text);
    problems.push(...found.map((problem) => ({ file, ...problem })));
    const parsed = parseSettingsText(read.text);
    const settings = found.length === 0 && parsed.ok
      ? {
        ...parsed.settings,
        ...(parsed.skills === undefined ? {} : { skills: parseSkillsSettings(parsed.skills) ?? {} }),
        ...(parsed.codeMode === undefined ? {} : { code_mode: parseCodeModeSettings(parsed.codeMode) ?? {} }),
      }
      : null;
    layers.push({ file, settings, mcp: parsed.ok ? parsed.mcp : undefined, hooks: parsed.ok ? parsed.hooks : undefined });
  }
  const [global, project] = [layers[0]!.settings, layers[1]?.settings ?? {}];
  const notes: FileProblem[] = [];
  if (global === null || project === null || problems.length > 0) return { checked, problems, notes };

  if (projectPath !== null) problems.push(...trustProblems(projectPath, global, project));
  problems.push(...instructionPathProblems(globalPath, global, "global"));
  if (projectPath !== null) problems.push(...instructionPathProblems(projectPath, project, "project"));
  const mcp = mcpMergeOf(layers[0]!, projectPath === null ? null : layers[1]!);
  problems.push(...mcp.problems);
  if (problems.length > 0) return { checked, problems, notes };
  const merged = mergeSettings(global, project);
  problems.push(...catalogProblems({ global: globalPath, project: projectPath }, global, project, merged));
  if (problems.length > 0) return { checked, problems, notes };
  const profiles = await profileProblems(runtime, { home, cwd }, { globalPath, projectPath, global, project, merged });
  checked.push(...profiles.checked);
  problems.push(...profiles.problems);
  notes.push(...profiles.notes);
  if (profiles.primary === null) return { checked, problems, notes };
  const selected = resolveSelection(merged, (name) => runtime.env(name), credentials, profiles.primary);
  if (!selected.ok) problems.push(selectionProblem(selected.code, merged, project.model?.provider !== undefined ? projectPath! : globalPath));
  const approvals = await mcpApprovalNotes(runtime, { home, cwd, merge: mcp });
  const hooks = await hookApprovalNotes(runtime, { home, cwd, global: layers[0]!, project: projectPath === null ? null : layers[1]! });
  // One unusable approvals file is one problem, whoever reads it.
  problems.push(...approvals.problems, ...hooks.problems.filter((problem) => approvals.problems.length === 0 || problem.path !== "$"));
  notes.push(...approvals.notes, ...hooks.notes);
  const files = { global: globalPath, project: projectPath, globalCount: global.instructions?.paths?.length ?? 0 };
  notes.push(...await instructionNotes(runtime, { home, cwd, ...files }, merged));
  notes.push(...await skillNotes(runtime, { home, cwd }, merged.skills?.disabled ?? []));
  notes.push(...codeModeNotes(globalPath, merged, mcp.servers, mergeCodeModeSettings(global.code_mode, project.code_mode)));
  return { checked, problems, notes };
}

/**
 * With Code Mode on, each direct `deny` whose Code Mode policy would still
 * run the tool (they are independent): a built-in's `tools` entry, or an
 * enabled MCP server's tool entry, named as programs call it.
 */
function codeModeNotes(file: string, merged: Settings, servers: readonly ConfiguredMcpServer[], codeMode: CodeModeSettings): FileProblem[] {
  if (!codeModeEnabled(codeMode)) return [];
  const settingOf = new Map(Object.keys(merged.tools ?? {}).map((name) => [name, jsonPath(["tools", name]).slice(2)]));
  const direct: Record<string, ApprovalPolicy> = { ...merged.tools };
  for (const server of servers.filter((candidate) => candidate.enabled)) {
    for (const [tool, policy] of Object.entries(server.toolPolicies)) {
      const exposed = exposedToolName(server.name, tool);
      direct[exposed] = policy;
      settingOf.set(exposed, jsonPath(["mcp", "servers", server.name, "tools", tool]).slice(2));
    }
  }
  return directDeniesOpenToCode(direct, codeMode).map((name) => ({
    file,
    path: `$.code_mode.tools.${name}`,
    message: `${settingOf.get(name)} is deny, but Code Mode programs may still call ${name}: the two policies are independent; add "${name}": "deny" under code_mode.tools to refuse it there too`,
  }));
}

function selectionProblem(code: ErrorCode, merged: Settings, file: string): FileProblem {
  const provider = merged.model?.provider ?? "ollama";
  if (code === ErrorCode.providerUnavailable) {
    const variable = resolveEndpoints(merged).get(provider)?.apiKeyEnv ?? "its API key variable";
    return { file: "environment", path: "$", message: `the ${provider} provider needs ${variable} set, or a key under "${provider}" in ${CREDENTIALS_FILE}; ${SEE}` };
  }
  if (merged.model?.model === undefined && merged.providers?.endpoints?.[provider] !== undefined) {
    return { file, path: "$.model.model", message: `the custom endpoint ${provider} has no default model; set model.model` };
  }
  return { file, path: "$.model.provider", message: `names no provider: use openai, anthropic, ollama or a name under providers.endpoints; ${SEE}` };
}
