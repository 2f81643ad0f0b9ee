// The small helpers every Bullpen script shares, loaded once by the base template before them
// (window.bullpenUtil). The pure ones take what they read as arguments, so node's test runner
// checks them (tests/js/); say() and count() read the page's <body data-text> and <html lang>.
(function (root) {
  "use strict";

  // ``text`` with each name in braces replaced by its value: fill("{n} jobs", { n: 3 }).
  function fill(text, values) {
    Object.keys(values || {}).forEach(function (name) {
      text = text.split("{" + name + "}").join(values[name]);
    });
    return text;
  }

  // The text for ``key`` in ``words`` (English without it), its names filled in; with a count
  // (values.n) and the key's plural forms, the form the language ``lang`` uses for it.
  function word(words, lang, key, english, values) {
    values = values || {};
    var text = words[key] || english;
    if (typeof values.n === "number" && words[key + "_one"]) {
      var form = new Intl.PluralRules(lang || "en").select(values.n);
      text = words[key + "_" + form] || words[key + "_other"];
    }
    return fill(text, values);
  }

  // The page's words, rendered by the server in the page's language; none on a page without.
  function pageWords() {
    try { return JSON.parse(document.body.dataset.text || "{}"); } catch (e) { return {}; }
  }

  function lang() { return document.documentElement.lang || "en"; }

  // What the scripts write on a page, in its language: say("live", "live").
  function say(key, english, values) { return word(pageWords(), lang(), key, english, values); }

  // A count grouped as the page's language writes it (12,345 / 12.345), as the server does.
  var formats = {};
  function count(n, language) {
    if (typeof n !== "number") return n;
    language = language || lang();
    if (!formats[language]) formats[language] = new Intl.NumberFormat(language);
    return formats[language].format(n);
  }

  // Markup the server rendered, parsed (never run) into a fragment to put in the page.
  function parse(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  // The value of cookie ``name`` in ``cookies`` (document.cookie), "" without it.
  function cookieValue(cookies, name) {
    var found = "";
    String(cookies || "").split(";").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at > 0 && pair.slice(0, at).trim() === name) found = pair.slice(at + 1).trim();
    });
    try { return decodeURIComponent(found); } catch (e) { return ""; }
  }

  // The query string ``query`` with ``changes`` made: an empty or missing value drops its name.
  function withChanges(query, changes) {
    var params = new URLSearchParams(query || "");
    Object.keys(changes).forEach(function (name) {
      var value = changes[name] == null ? "" : String(changes[name]);
      if (value === "") params.delete(name);
      else params.set(name, value);
    });
    params.sort();
    return params.toString();
  }

  // A few tries for each value asked about, then none until the value changes: each call
  // gives the wait before its try (``first`` ms, then ``step`` times the try's number), or
  // null once ``most`` were made for that value.
  function tries(most, first, step) {
    var value, made = 0;
    return function (next) {
      if (made === 0 || next !== value) { value = next; made = 0; }
      if (made >= most) return null;
      made += 1;
      return made === 1 ? first : step * made;
    };
  }

  var util = {
    fill: fill, word: word, say: say, count: count, parse: parse,
    cookieValue: cookieValue, withChanges: withChanges, tries: tries
  };
  if (typeof module === "object" && module.exports) module.exports = util;
  else root.bullpenUtil = util;
})(this);
