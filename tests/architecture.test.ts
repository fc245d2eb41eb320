import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { describe, it } from "node:test";
import { VERSION } from "../src/util/version.ts";
import { repoRoot } from "./support/processes.ts";

const root = repoRoot();

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Drops comments and string contents' surroundings are kept: imports are strings. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}


/**
 * The layers of `src/`, bottom first: a file may import from its own layer
 * and the ones before it, never from a later one. `docs/architecture.md`
 * draws the same list.
 */
const LAYERS = [
  "host",
  "util",
  "policy",
  "sandbox",
  "protocol",
  "client",
  "transport",
  "config",
  "trust",
  "grants",
  "store",
  "catalog",
  "cards",
  "runner",
  "agents",
  "rewind",
  "mcp",
  "hooks",
  "client-tools",
  "admission",
  "operations",
  "server.ts",
  "cli.ts",
  "fuzz",
] as const;

/** Largest file under `src/`, in lines. */
const MAX_LINES = 300;

/** Every relative module a file names: static imports and re-exports (type-only too) and `import("…")`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/\b(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) found.push(match[1]!);
  return found;
}

/** The import graph of `src/`: repo-relative file → the src files it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const from = relative(root, file).split(sep).join("/");
    const targets = specifiers(code(readFileSync(file, "utf8")))
      .map((spec) => posix.normalize(posix.join(posix.dirname(from), spec)))
      .filter((target) => target.startsWith("src/"));
    graph.set(from, targets);
  }
  return graph;
}

/** The layer a `src/` file belongs to: the index of its top-level folder or file in {@link LAYERS}. */
function layerOf(file: string): number {
  return (LAYERS as readonly string[]).indexOf(file.split("/")[1]!);
}

/** One cycle of `graph`, as the nodes along it, or null when it is acyclic. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle !== null) return cycle;
  }
  return null;
}

/** The graph between folders: an edge wherever a file of one folder imports a file of another. */
function folderGraph(graph: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const source = posix.dirname(from);
    for (const target of targets) {
      const folder = posix.dirname(target);
      if (folder === source) continue;
      if (!folders.has(source)) folders.set(source, new Set());
      folders.get(source)!.add(folder);
    }
  }
  return new Map([...folders].map(([folder, targets]) => [folder, [...targets]]));
}

describe("architecture", () => {
  const files = sources(join(root, "src"));

  it("src/ has TypeScript sources to check", () => {
    assert.ok(files.length > 10);
  });

  it("nothing under src/ imports node:* or touches Deno", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const text = code(readFileSync(file, "utf8"));
      if (/\bfrom\s+["']node:|\bimport\s*\(\s*["']node:|\brequire\s*\(/.test(text)) offenders.push(`${relative(root, file)}: node import`);
      if (/\bDeno\s*[.[]|globalThis\s*\.\s*Deno|["']Deno["']\s+in\b/.test(text)) offenders.push(`${relative(root, file)}: Deno`);
      if (/\bprocess\s*\.\s*(env|argv|exit|stdout|stdin|stderr|cwd|platform)\b/.test(text)) {
        offenders.push(`${relative(root, file)}: process global`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it("every wire error code is spelled only in src/protocol/errors.ts, in any quotes", () => {
    const table = readFileSync(join(root, "src", "protocol", "errors.ts"), "utf8");
    const codes = [...table.matchAll(/:\s*"([a-z_]+)",/g)].map((match) => match[1]!);
    assert.ok(codes.length >= 30);
    const offenders: string[] = [];
    for (const file of files) {
      if (file.endsWith(join("protocol", "errors.ts"))) continue;
      const text = code(readFileSync(file, "utf8"));
      for (const wire of codes) {
        // Any quoting counts: double, single, or a template literal holding only the code.
        if ([`"${wire}"`, `'${wire}'`, `\`${wire}\``].some((spelled) => text.includes(spelled))) {
          offenders.push(`${relative(root, file)}: ${wire}`);
        }
      }
    }
    assert.deepEqual(offenders, []);
  });

  it("every file under src/ belongs to a layer", () => {
    const graph = importGraph(files);
    assert.deepEqual([...graph.keys()].filter((file) => layerOf(file) < 0), []);
  });

  it("no file imports from a later layer", () => {
    const offenders: string[] = [];
    for (const [from, targets] of importGraph(files)) {
      for (const target of targets) {
        if (layerOf(target) > layerOf(from)) offenders.push(`${from} -> ${target}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it("the client library is a leaf: it imports protocol and below, and no server layer imports it", () => {
    const offenders: string[] = [];
    for (const [from, targets] of importGraph(files)) {
      if (from.startsWith("src/client/")) continue;
      for (const target of targets) if (target.startsWith("src/client/")) offenders.push(`${from} -> ${target}`);
    }
    assert.deepEqual(offenders, []);
  });

  it("no import cycle between files, type-only imports included", () => {
    assert.equal(findCycle(importGraph(files))?.join(" -> ") ?? null, null);
  });

  it("no import cycle between folders", () => {
    assert.equal(findCycle(folderGraph(importGraph(files)))?.join(" -> ") ?? null, null);
  });

  it(`no file under src/ is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(root, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    assert.deepEqual(long, []);
  });

  it("docs/architecture.md names only files that exist and draws the layers in LAYERS order", () => {
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const missing = doc.split("\n")
      .filter((row) => !row.includes("not built yet"))
      .flatMap((row) => [...row.matchAll(/`(src\/[^`*]+?\.ts)`/g)].map((match) => match[1]!))
      .filter((path) => !existsSync(join(root, path)));
    assert.deepEqual(missing, []);
    const drawing = /```\n([\s\S]*?)```/.exec(doc)![1]!.split("\n").filter((row) => row.trim() !== "");
    const drawn = drawing.map((row) => row.trim().split(/\s+/)[0]!.replace(/\/$/, "")).reverse();
    assert.deepEqual(drawn, [...LAYERS]);
  });

  it("the runner reaches the store only through record types", () => {
    const allowed = new Set(["src/store/records.ts", "src/store/conversation-records.ts"]);
    const offenders: string[] = [];
    for (const file of files) {
      const from = relative(root, file).split(sep).join("/");
      if (!from.startsWith("src/runner/")) continue;
      const text = code(readFileSync(file, "utf8"));
      for (const match of text.matchAll(/\b(import|export)(\s+type)?\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = posix.normalize(posix.join(posix.dirname(from), match[3]!));
        if (!target.startsWith("src/store/")) continue;
        if (match[2] === undefined || !allowed.has(target)) offenders.push(`${from} -> ${target}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it("findCycle() finds a two-file cycle and accepts a chain", () => {
    assert.deepEqual(findCycle(new Map([["a", ["b"]], ["b", ["a"]]])), ["a", "b", "a"]);
    assert.equal(findCycle(new Map([["a", ["b"]], ["b", ["c"]]])), null);
  });

  it("specifiers() sees type-only imports, re-exports and import()", () => {
    const text = 'import type { A } from "./a.ts";\nexport { B } from "../b.ts";\ntype C = typeof import("./c.ts");';
    assert.deepEqual(specifiers(text), ["./a.ts", "../b.ts", "./c.ts"]);
  });

  it("VERSION equals package.json's version", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    assert.equal(VERSION, pkg.version);
    const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
    assert.equal(deno.version, pkg.version);
  });
});
