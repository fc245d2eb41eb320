import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isSafeDisplayName, MAX_SCANNED_RUN, redactSecrets, REDACTION_MARKER } from "../src/util/redaction.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";

// Shaped like real credentials but built at runtime, so no scanner mistakes this file for a leak.
const body = (length: number, alphabet = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z") =>
  Array.from({ length }, (_, i) => alphabet[(i * 7 + 3) % alphabet.length]).join("");
const SAMPLES: Record<string, string> = {
  openai: `sk-${body(24)}`,
  "openai project": `sk-proj-${body(40)}`,
  anthropic: `sk-ant-api03-${body(32)}`,
  "github classic": `ghp_${body(36)}`,
  "github oauth": `gho_${body(36)}`,
  "github fine-grained": `github_pat_${body(40)}`,
  slack: `xoxb-1234567890-${body(20)}`,
  aws: `AKIA${body(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
  google: `AIza${body(35)}`,
  jwt: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.${body(20)}`,
  "hex key": body(40, "0123456789abcdef"),
  "base64 key": `${body(30)}+/${body(10)}==`,
};

test("isSafeDisplayName() accepts ordinary provider and model names", () => {
  for (const name of [
    "ollama", "openai", "gpt-5-mini", "claude-sonnet-4-5", "qwen2.5-coder:7b", "llama3.1:70b-instruct-q4_K_M",
    "meta-llama/Meta-Llama-3-8B-Instruct", "anthropic/claude-3-5-sonnet-20241022", "microsoft/Phi-3-mini-4k-instruct",
    "accounts/fireworks/models/llama-v3p1-70b-instruct", "550e8400-e29b-41d4-a716-446655440000", "Modèle été 🚀", "x",
  ]) {
    assert.equal(isSafeDisplayName(name), true, name);
  }
});

test("isSafeDisplayName() treats 256 UTF-8 bytes as the limit for multibyte names", () => {
  const cases: Array<[string, number, boolean]> = [
    [`${"é".repeat(127)}a`, 255, true],
    ["é".repeat(128), 256, true],
    [`${"é".repeat(128)}a`, 257, false],
    [`${"€".repeat(85)}`, 255, true],
    [`${"€".repeat(85)}a`, 256, true],
    [`${"€".repeat(85)}ab`, 257, false],
    [`${"🚀".repeat(63)}abc`, 255, true],
    ["🚀".repeat(64), 256, true],
    [`${"🚀".repeat(64)}a`, 257, false],
    ["a".repeat(257), 257, false],
  ];
  for (const [name, bytes, safe] of cases) {
    assert.equal(utf8ByteCount(name), bytes);
    assert.equal(isSafeDisplayName(name), safe, `${bytes} bytes`);
  }
});

test("isSafeDisplayName() rejects empty names, control characters and lone surrogates", () => {
  for (const name of ["", "a\u0000b", "tab\tname", "line\nbreak", "del\u007F", "c1\u0080", "c1\u009F", "half\uD83D", "\uDE80x"]) {
    assert.equal(isSafeDisplayName(name), false, JSON.stringify(name));
  }
});

test("isSafeDisplayName() rejects secret-like names", () => {
  for (const [label, secret] of Object.entries(SAMPLES)) {
    assert.equal(isSafeDisplayName(secret), false, label);
    assert.equal(isSafeDisplayName(`model ${secret}`), false, `${label} embedded`);
  }
  assert.equal(isSafeDisplayName("Bearer abc"), false);
});

test("isSafeDisplayName() accepts any short printable ASCII name without a vendor prefix", () => {
  fc.assert(fc.property(fc.stringMatching(/^[a-z0-9 .:-]{1,31}$/), (name) => {
    fc.pre(!/(^|[^a-z0-9_-])(sk-|xox[abposr]-)/.test(name));
    assert.equal(isSafeDisplayName(name), true);
  }));
});

test("redactSecrets() removes every known secret of 8+ characters", () => {
  // Secrets avoid the marker's characters, so no replacement can rebuild one.
  const secret = fc.stringMatching(/^[A-Z0-9!@#$%^&*]{8,40}$/);
  fc.assert(fc.property(fc.array(fc.oneof(fc.string(), secret), { maxLength: 12 }), fc.array(secret, { minLength: 1, maxLength: 4 }), (parts, secrets) => {
    const text = parts.concat(secrets).join(" ");
    const out = redactSecrets(text, secrets);
    for (const s of secrets) assert.ok(!out.includes(s), s);
  }));
});

test("redactSecrets() leaves no fragment of overlapping known secrets", () => {
  assert.equal(redactSecrets("id=ABCDEFGHIJKL;", ["ABCDEFGH", "EFGHIJKL"]), `id=${REDACTION_MARKER};`);
  assert.equal(redactSecrets("AAAAAAAAAAAA", ["AAAAAAAA"]), REDACTION_MARKER);
});

test("redactSecrets() ignores known secrets shorter than 8 characters", () => {
  assert.equal(redactSecrets("the key is abc1234 here", ["abc1234", ""]), "the key is abc1234 here");
});

test("redactSecrets() removes every secret-like token wherever it appears", () => {
  const token = fc.constantFrom(...Object.values(SAMPLES));
  const prose = fc.stringMatching(/^[a-z ,.]{0,20}$/);
  fc.assert(fc.property(prose, token, prose, (before, secret, after) => {
    const out = redactSecrets(`${before} ${secret} ${after}`, []);
    assert.ok(!out.includes(secret));
    assert.ok(out.includes(REDACTION_MARKER));
    assert.ok(out.startsWith(before) && out.endsWith(after));
  }));
});

test("redactSecrets() keeps the scheme of a bearer token", () => {
  assert.equal(redactSecrets("Authorization: Bearer abc.def-123", []), `Authorization: Bearer ${REDACTION_MARKER}`);
});

test("redactSecrets() leaves text without secrets unchanged", () => {
  fc.assert(fc.property(fc.stringMatching(/^[a-z .,\n]{0,200}$/), (text) => {
    assert.equal(redactSecrets(text, []), text);
  }));
  const paths = "see src/startup/settings.ts, task-force-deployment-config and meta-llama/Meta-Llama-3-8B-Instruct";
  assert.equal(redactSecrets(paths, []), paths);
});

test("redactSecrets() is idempotent", () => {
  const piece = fc.oneof(fc.string(), fc.constantFrom(...Object.values(SAMPLES)), fc.stringMatching(/^[A-Za-z0-9+/_=-]{20,60}$/));
  fc.assert(fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.string({ minLength: 8 }), { maxLength: 2 }), (parts, known) => {
    const once = redactSecrets(parts.join(""), known);
    fc.pre(known.every((k) => !once.includes(k)));
    assert.equal(redactSecrets(once, known), once);
  }));
});

// Inputs that make backtracking rules blow up: an engine that backtracked would not return at all
// (the suite would hang), so the answers themselves are the check. How long they take is measured
// by bench/hostile-inputs.mjs, never asserted here.
test("redactSecrets() answers hostile repetitions exactly", () => {
  const expected: Record<string, string> = {
    "eyJ": "eyJ".repeat(20_000), // a JWT needs its dots: nothing to redact
    "sk-": REDACTION_MARKER,
    "a1": REDACTION_MARKER,
    "Bearer ": `Bearer ${`${REDACTION_MARKER} `.repeat(19_999)}`,
    "xoxb-": REDACTION_MARKER,
  };
  for (const [unit, answer] of Object.entries(expected)) assert.equal(redactSecrets(unit.repeat(20_000), []), answer, unit);
});

test("redactSecrets() replaces a 6,000,000-character token run without overflowing the regex stack", () => {
  const blob = "a1".repeat(3_000_000);
  assert.equal(redactSecrets(`before ${blob} after`, []), "before [redacted] after");
  const plain = "x".repeat(MAX_SCANNED_RUN);
  assert.equal(redactSecrets(plain, []), plain, "a run at the bound is left to the ordinary rules");
});

test("redactSecrets() hides the password of scheme://user:secret@host URLs, keeping user and host", () => {
  const cases: [string, string][] = [
    ["url = https://alice:hunter2@github.com/org/repo.git", `url = https://alice:${REDACTION_MARKER}@github.com/org/repo.git`],
    ["https://x-access-token:abc@example.com", `https://x-access-token:${REDACTION_MARKER}@example.com`],
    ["svn+ssh://u:p%40ss@host/", `svn+ssh://u:${REDACTION_MARKER}@host/`],
    // The password runs to the authority's last @, so an unencoded @ in it does not leave a tail behind.
    ["https://u:p@ss@host/x", `https://u:${REDACTION_MARKER}@host/x`],
    ["https://:only-password@host", `https://:${REDACTION_MARKER}@host`],
    ["(see https://bob:s3cret@internal.example:8443/path)", `(see https://bob:${REDACTION_MARKER}@internal.example:8443/path)`],
  ];
  for (const [input, expected] of cases) assert.equal(redactSecrets(input, []), expected, input);
  for (const plain of ["git@github.com:org/repo.git", "ssh://git@github.com/org/repo", "https://host:8080/a@b", "mailto:a@b.c", "http://host/x:y@z"]) {
    assert.equal(redactSecrets(plain, []), plain, plain);
  }
});

test("redactSecrets() never lets a URL password through, whatever surrounds it (property)", () => {
  const part = (min: number) => fc.string({ unit: fc.constantFrom(..."abcXYZ019-._~%!$&'()*+,;="), minLength: min, maxLength: 24 });
  fc.assert(
    fc.property(
      fc.constantFrom("https", "git+ssh", "ftp", "x"),
      part(0),
      part(6).filter((secret) => !secret.includes("redacted")),
      fc.constantFrom("", " ", "\n", "url = ", "«", "\u202E"),
      fc.constantFrom("", "/path", "?q=1", " tail", "#frag"),
      (scheme, user, secret, before, after) => {
        const out = redactSecrets(`${before}${scheme}://${user}:${secret}@host.example${after}`, []);
        assert.ok(!out.includes(`:${secret}@`), out);
        assert.ok(out.includes("@host.example"), out);
      },
    ),
  );
});

test("redactSecrets() stays linear on URL-shaped runs without an @", () => {
  const long = `${"a".repeat(200_000)}://${"u".repeat(200_000)}:${"p".repeat(200_000)}`;
  assert.equal(redactSecrets(`${"x://y:".repeat(50_000)} done`, []).endsWith(" done"), true);
  assert.ok(redactSecrets(long, []).length > 0);
});
