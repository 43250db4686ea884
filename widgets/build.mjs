// Bundles every widgets/src/<name>.js that does not start with "_" into txlab/static/<name>.js.
// `node build.mjs --check` rebuilds in memory and exits 1 if a committed bundle is stale.
import * as esbuild from "esbuild";
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "src");
const out = join(here, "..", "txlab", "static");
const check = process.argv.includes("--check");
const entries = readdirSync(src).filter((f) => f.endsWith(".js") && !f.startsWith("_"));
let stale = [];
for (const entry of entries) {
  const result = await esbuild.build({
    entryPoints: [join(src, entry)],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: false,
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
if (check) {
  if (stale.length) {
    console.error(`stale bundles (run: make widgets): ${stale.join(", ")}`);
    process.exit(1);
  }
  console.log(`${entries.length} bundles match their sources`);
}
