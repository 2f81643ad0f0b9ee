// The pure helpers of static/bullpen/util.js, under node's own test runner (node --test tests/js/).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const util = require(path.join(__dirname, "..", "..", "static", "bullpen", "util.js"));

test("fill puts each value where its name is, every time it appears", () => {
  assert.equal(util.fill("{n} of {n} jobs in {queue}", { n: 3, queue: "mail" }), "3 of 3 jobs in mail");
  assert.equal(util.fill("no names", { n: 1 }), "no names");
  assert.equal(util.fill("{n} left", undefined), "{n} left");
});

test("word takes the page's words, English without them", () => {
  const words = { live: "aktiv", progress: "{action}: {done} von {total}" };
  assert.equal(util.word(words, "de", "live", "live"), "aktiv");
  assert.equal(util.word({}, "de", "live", "live"), "live");
  assert.equal(util.word(words, "de", "progress", "", { action: "Retry", done: 2, total: 5 }), "Retry: 2 von 5");
});

test("word picks the plural form the language uses for the count", () => {
  const words = { started_one: "{n} job (one)", started_other: "{n} jobs (other)" };
  assert.equal(util.word(words, "en", "started", "x", { n: 1 }), "1 job (one)");
  assert.equal(util.word(words, "en", "started", "x", { n: 0 }), "0 jobs (other)");
  // French counts zero as one; English does not.
  assert.equal(util.word(words, "fr", "started", "x", { n: 0 }), "0 job (one)");
  // Without a count, the key's plain word (or English).
  assert.equal(util.word(words, "en", "started", "English {n}", {}), "English {n}");
});

test("count groups digits as the language writes them", () => {
  assert.equal(util.count(12345, "en"), "12,345");
  assert.equal(util.count(12345, "de"), "12.345");
  assert.equal(util.count("n/a", "en"), "n/a");
});

test("cookieValue finds one cookie among several and decodes it", () => {
  const jar = "other=1; bullpen_prefs=overview_sort%3D-failed%26tab%3Dfailed; bullpen_prefs_x=2";
  assert.equal(util.cookieValue(jar, "bullpen_prefs"), "overview_sort=-failed&tab=failed");
  assert.equal(util.cookieValue(jar, "missing"), "");
  assert.equal(util.cookieValue("", "bullpen_prefs"), "");
  assert.equal(util.cookieValue("bullpen_prefs=%E0%A4%A", "bullpen_prefs"), "");
});

test("withChanges sets, replaces and drops names, in a stable order", () => {
  assert.equal(util.withChanges("tab=failed", { overview_sort: "-waiting" }), "overview_sort=-waiting&tab=failed");
  assert.equal(util.withChanges("overview_sort=name&tab=failed", { overview_sort: "-failed" }), "overview_sort=-failed&tab=failed");
  assert.equal(util.withChanges("overview_group=head&tab=failed", { overview_group: "", tab: null }), "");
  assert.equal(util.withChanges("", { json_depth: "all" }), "json_depth=all");
});

test("tries gives a few waits for one value, then none until the value changes", () => {
  const wait = util.tries(3, 300, 700);
  assert.deepEqual([wait(5), wait(5), wait(5), wait(5)], [300, 1400, 2100, null]);
  assert.equal(wait(5), null);
  assert.deepEqual([wait(6), wait(6)], [300, 1400]);
  assert.equal(wait(5), 300);
});
