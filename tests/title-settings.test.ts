/**
 * `agent.titles` (docs/settings.md#session-titles): on unless a settings
 * file says `"enabled": false`, strictly validated like every other key,
 * and merged as a whole, the project file winning.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mergeSettings, parseSettingsText } from "../src/config/settings.ts";
import { titlesEnabled } from "../src/config/title-settings.ts";

/** Whether `text` parses as a settings file. */
function accepted(text: string): boolean {
  return parseSettingsText(text).ok;
}

describe("agent.titles settings", () => {
  it("titles are on when no file says otherwise", () => {
    assert.equal(titlesEnabled(undefined), true);
    assert.equal(titlesEnabled({}), true);
    assert.equal(titlesEnabled({ enabled: false }), false);
  });

  it("enabled takes a boolean only, and titles takes no other key", () => {
    assert.ok(accepted('{ "agent": { "titles": { "enabled": false } } }'));
    assert.ok(accepted('{ "agent": { "titles": {} } }'));
    for (const bad of ['"false"', "0", "null", "[]"]) assert.ok(!accepted(`{ "agent": { "titles": { "enabled": ${bad} } } }`), bad);
    assert.ok(!accepted('{ "agent": { "titles": { "enabled": true, "model": "x" } } }'));
    assert.ok(!accepted('{ "agent": { "titles": true } }'));
  });

  it("the project file's agent.titles replaces the global one, and max_steps merges beside it", () => {
    const global = parseSettingsText('{ "agent": { "max_steps": 9, "titles": { "enabled": false } } }');
    const project = parseSettingsText('{ "agent": { "titles": { "enabled": true } } }');
    assert.ok(global.ok && project.ok);
    const merged = mergeSettings(global.settings, project.settings);
    assert.deepEqual(merged.agent, { max_steps: 9, titles: { enabled: true } });
    assert.equal(titlesEnabled(merged.agent?.titles), true);
  });
});
