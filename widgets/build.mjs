// Bundles every widgets/src/<name>.js that does not start with "_" into txlab/static/<name>.js
// (minified: a bundle is a build output, and each one inlines the shared _common.js once more), and
// widgets/src/export/embed.js (the offline widget renderer of txlab.export) into
// txlab/static/export/embed.js. `node build.mjs --check` rebuilds in memory and exits 1 if a
// committed bundle is stale; `--export-only` builds/checks only the renderer; META=1 prints what
// makes up the renderer's size.
import * as esbuild from "esbuild";
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "src");
const out = join(here, "..", "txlab", "static");
const check = process.argv.includes("--check");
// --export-only: just the offline renderer (leaves the widget bundles alone)
const exportOnly = process.argv.includes("--export-only");
const entries = exportOnly ? [] : readdirSync(src).filter((f) => f.endsWith(".js") && !f.startsWith("_"));
let stale = [];
for (const entry of entries) {
  const result = await esbuild.build({
    entryPoints: [join(src, entry)],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    legalComments: "none",
    write: false,
    charset: "utf8",
    banner: { js: `// built from widgets/src/${entry} by widgets/build.mjs; do not edit` },
  });
  const text = result.outputFiles[0].text;
  const target = join(out, entry);
  if (check) {
    if (!existsSync(target) || readFileSync(target, "utf8") !== text) stale.push(entry);
  } else {
    writeFileSync(target, text);
    console.log(`built txlab/static/${entry} (${text.length} bytes)`);
  }
}
// The offline renderer that txlab.export inlines into exported HTML (not a widget: it lives in
// txlab/static/export/, outside the widget bundles' glob).
const embed = await buildEmbed();
const embedTarget = join(out, "export", "embed.js");
if (check) {
  if (!existsSync(embedTarget) || readFileSync(embedTarget, "utf8") !== embed) stale.push("export/embed.js");
} else {
  mkdirSync(dirname(embedTarget), { recursive: true });
  writeFileSync(embedTarget, embed);
  console.log(`built txlab/static/export/embed.js (${embed.length} bytes)`);
}
if (check) {
  if (stale.length) {
    console.error(`stale bundles (run: make widgets): ${stale.join(", ")}`);
    process.exit(1);
  }
  if (!exportOnly) console.log(`${entries.length} bundles match their sources`);
  console.log("export/embed.js matches its sources");
}

async function buildEmbed() {
  // anywidget's npm build ends in an AMD define() for requirejs; expose its factory as an ES export
  const anywidgetEsm = {
    name: "anywidget-esm",
    setup(b) {
      b.onLoad({ filter: /[\\/]anywidget[\\/]dist[\\/]index\.js$/ }, (args) => {
        const text = readFileSync(args.path, "utf8");
        const amd = 'define(["@jupyter-widgets/base"], widget_default);';
        if (!text.includes(amd)) throw new Error(`anywidget's dist/index.js no longer ends in ${amd}: update build.mjs`);
        return { contents: text.replace(amd, "export default widget_default;"), loader: "js" };
      });
    },
  };
  // CSS required by the widget manager becomes a <style> added when the requiring code runs
  // (html-manager requires the controls' CSS only when a page uses them)
  const cssInject = {
    name: "css-inject",
    setup(b) {
      b.onLoad({ filter: /\.css$/, namespace: "file" }, async (args) => {
        const r = await esbuild.build({
          entryPoints: [args.path], bundle: true, minify: true, write: false, logLevel: "silent",
          loader: { ".woff": "empty", ".woff2": "empty", ".ttf": "empty", ".eot": "empty", ".svg": "dataurl", ".png": "dataurl" },
        });
        const css = r.outputFiles[0].text;
        if (/@import|url\((?!["']?data:)/.test(css)) throw new Error(`${args.path}: CSS would load a URL: ${css.match(/@import[^;]*|url\([^)]*\)/)[0]}`);
        return {
          contents: `const s = document.createElement("style"); s.textContent = ${JSON.stringify(css)}; document.head.appendChild(s);`,
          loader: "js",
        };
      });
    },
  };
  // ipywidgets 7 state never comes from ipywidgets 8 (txlab requires >=8.1): leave its modules out
  const noWidgets7 = {
    name: "no-widgets7",
    setup(b) {
      b.onResolve({ filter: /^@jupyter-widgets\/(base7|controls7)(\/|$)/ }, (args) => ({ path: args.path, namespace: "widgets7" }));
      b.onLoad({ filter: /.*/, namespace: "widgets7" }, (args) => ({
        contents: args.path.endsWith(".css") ? "" :
          `throw new Error("ipywidgets 7 widget state is not supported by txlab's offline export (${args.path})");`,
        loader: "js",
      }));
    },
  };
  // base-manager and @jupyterlab/apputils pin different sanitize-html 2.x releases: bundle one
  const oneSanitizer = {
    name: "one-sanitize-html",
    setup(b) {
      b.onResolve({ filter: /^sanitize-html$/ }, () => ({ path: join(here, "node_modules", "sanitize-html", "index.js") }));
    },
  };
  const result = await esbuild.build({
    entryPoints: [join(src, "export", "embed.js")],
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    legalComments: "eof",
    write: false,
    charset: "utf8",
    define: { "process.env.NODE_ENV": '"production"' },
    loader: { ".svg": "text" },   // @jupyterlab/ui-components imports its icons as SVG text
    plugins: [anywidgetEsm, cssInject, noWidgets7, oneSanitizer],
    metafile: !!process.env.META,
    banner: { js: "// built from widgets/src/export/embed.js by widgets/build.mjs; do not edit" },
  });
  if (process.env.META) console.log(await esbuild.analyzeMetafile(result.metafile));
  // The bundle is inlined in a <script> element. "</script" would end it early and "<!--" can
  // switch the HTML parser into script-data-escaped states; esbuild already escapes the former,
  // the latter occurs only as a string literal in the bundled HTML libraries: write it "<\!--".
  const text = result.outputFiles[0].text.replaceAll('"<!--"', '"<\\!--"');
  const bad = text.match(/<!--|<\/script/i);
  if (bad) throw new Error(`embed.js contains ${bad[0]} outside a plain string literal: it cannot be inlined in HTML`);
  return text;
}
