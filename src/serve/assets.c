/* sluice serve's static files: its style (after the report's) and its one script. */
#include "serve/serve_int.h"

const char serve__css[] =
	"nav{border-bottom:1px solid #ddd;padding-bottom:8px;margin-bottom:12px}"
	"nav a{margin-right:10px}main{max-width:1200px}"
	"aside{margin-top:24px;border-top:1px solid #ddd}#live{font:12px monospace;color:#555}"
	".error{color:#c62828}.ok{color:#2e7d32}#notice{padding:6px;border:1px solid #ddd}"
	"form.action{display:inline-block;margin:4px 8px 4px 0}"
	"pre{background:#fafafa;border:1px solid #eee;padding:8px;overflow:auto;max-height:40em}"
	"pre.diff span{display:block;white-space:pre}pre.diff .a{background:#e8f5e9}"
	"pre.diff .d{background:#ffebee}pre.diff .h{color:#6a1b9a}"
	"details.file{margin:4px 0}details.file summary{cursor:pointer}"
	".sides{display:grid;grid-template-columns:1fr 1fr;gap:16px}"
	".side{border:1px solid #ddd;padding:8px;min-width:0}"
	"table.facts th{width:10em}";

/*
 * The pages follow the event stream: each event goes into the "live" list
 * (as text, never as HTML) and the page's <main> is fetched again, unless
 * the person is typing in an action's form or reading an opened file of a
 * diff (a filter's fields do not count). The ?done= of an action's redirect
 * is taken off the address at once, so that a refresh does not say it again.
 */
const char serve__js[] =
	"\"use strict\";\n"
	"(function () {\n"
	"  var main = document.getElementById(\"main\");\n"
	"  if (!main || !window.EventSource) return;\n"
	"  var state = document.getElementById(\"live-state\");\n"
	"  var live = document.getElementById(\"live\");\n"
	"  var es = new EventSource(\"/events?since=\" + (main.getAttribute(\"data-seq\") || \"0\"));\n"
	"  var timer = null;\n"
	"  if (/[?&]done=/.test(location.search))\n"
	"    history.replaceState(null, \"\", location.pathname +\n"
	"      location.search.replace(/([?&])done=[^&]*&?/, \"$1\").replace(/[?&]$/, \"\"));\n"
	"  function busy() {\n"
	"    var a = document.activeElement, i;\n"
	"    var t = main.querySelectorAll(\"form[method=post] input[type=text]\");\n"
	"    if (a && a.form && a.form.method === \"post\") return true;\n"
	"    for (i = 0; i < t.length; i++) if (t[i].value) return true;\n"
	"    return main.querySelectorAll(\"details[open]\").length > 0;\n"
	"  }\n"
	"  function refresh() {\n"
	"    timer = null;\n"
	"    if (busy()) return;\n"
	"    fetch(location.href, {credentials: \"same-origin\"}).then(function (r) {\n"
	"      return r.ok ? r.text() : null;\n"
	"    }).then(function (html) {\n"
	"      if (!html) return;\n"
	"      var m = new DOMParser().parseFromString(html, \"text/html\").getElementById(\"main\");\n"
	"      if (!m) return;\n"
	"      main.innerHTML = m.innerHTML;\n"
	"      main.setAttribute(\"data-seq\", m.getAttribute(\"data-seq\"));\n"
	"      document.body.setAttribute(\"data-refreshed\", String(Date.now()));\n"
	"    });\n"
	"  }\n"
	"  es.onopen = function () { if (state) state.textContent = \"live\"; };\n"
	"  es.onerror = function () { if (state) state.textContent = \"reconnecting\"; };\n"
	"  es.addEventListener(\"run\", function (ev) {\n"
	"    var d = JSON.parse(ev.data), li;\n"
	"    if (live) {\n"
	"      li = document.createElement(\"li\");\n"
	"      li.textContent = d.at + \" \" + (d.work_order || \"\") + \" \" + (d.from || \"new\") +\n"
	"        \" \\u2192 \" + (d.to || \"\") + \": \" + (d.reason || \"\");\n"
	"      live.insertBefore(li, live.firstChild);\n"
	"      while (live.children.length > 30) live.removeChild(live.lastChild);\n"
	"    }\n"
	"    if (!timer) timer = setTimeout(refresh, 300);\n"
	"  });\n"
	"})();\n";
