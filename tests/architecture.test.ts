import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { VERSION } from "../src/version.ts";
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

  it("every wire error code is spelled only in src/protocol/errors.ts", () => {
    const table = readFileSync(join(root, "src", "protocol", "errors.ts"), "utf8");
    const codes = [...table.matchAll(/:\s*"([a-z_]+)",/g)].map((match) => match[1]!);
    assert.ok(codes.length >= 30);
    const offenders: string[] = [];
    for (const file of files) {
      if (file.endsWith(join("protocol", "errors.ts"))) continue;
      const text = code(readFileSync(file, "utf8"));
      for (const wire of codes) if (text.includes(`"${wire}"`)) offenders.push(`${relative(root, file)}: ${wire}`);
    }
    assert.deepEqual(offenders, []);
  });

  it("VERSION equals package.json's version", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    assert.equal(VERSION, pkg.version);
    const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
    assert.equal(deno.version, pkg.version);
  });
});
