#!/usr/bin/env node
// Builds the npm package into pkg/ (SPEC K-9.1, K-9.2): the loop's wasm module, `agent_loop_wasm` (one cargo compile and
// two wasm-bindgen glues (wasm-pack `--target web` and `--target nodejs`, release, --weak-refs), wasm-opt from the
// binaryen npm package with the arguments of Cargo.toml's wasm-pack metadata (once when both targets' .wasm are
// identical), the glue's hashed import names shortened in each wasm and both its glues (short-imports.mjs), the
// glue's imports that may throw catching in place (inline-catch.mjs), then the
// JS entries from pkg-template/:
//
//   dist/node/  CommonJS (own package.json {"type":"commonjs"}): nodejs glues, which read their .wasm beside them
//               synchronously; api.js, agent.js, streams.js and the glues' snippets transpiled from the shared ESM
//               sources to CJS (so Node 18, which has no require(esm), can load every file); index.cjs; index.mjs,
//               an ESM face over index.cjs (one instance for import and require); slim.cjs/.mjs for ./web;
//               providers.js + builtin-providers.js (the built-in providers, plain JS, required on first use).
//   dist/web/   ES modules: web glues, core.js (the instance holder, init/initSync), providers.js + builtin-providers.js
//               (the built-in providers, plain JS, imported on first use; issue 43), api.js etc. as written; index.js (top-level await init), workerd.js
//               (.wasm imports + initSync), slim.js (agent-loop-wasm/web).
//   dist/deno/  index.js (initSync over dist/web/core.js of the .wasm: `import source` where Deno has it, else base64),
//               wasm-source.js, wasm.js, slim.js.
//   mcp         agent-loop-wasm/mcp (no wasm): dist/web/mcp.js, dist/node/mcp.cjs + mcp.mjs, dist/deno/mcp.js.
//   ui          agent-loop-wasm/ui (no wasm; its parts ui-*.js and errors.js): dist/web/ui.js, dist/node/ui.cjs + ui.mjs, dist/deno/ui.js.
//   otel        agent-loop-wasm/otel (no wasm), the same way: dist/web/otel.js, dist/node/otel.cjs + .mjs, dist/deno/otel.js.
//   testing     agent-loop-wasm/testing (no wasm), as otel: dist/web/testing.js, dist/node/testing.cjs + .mjs, dist/deno/testing.js.
//   models      agent-loop-wasm/models (no wasm): dist/web/models.js + models-data.js, dist/node/models.cjs + .mjs +
//               models-data.js (CJS), dist/deno/models.js.
// And, outside pkg/, target/parity/: the loop module with the test-only `__fastPath` export (PARITY below), for
// tests/js/parity.test.mjs.
//
// Usage: node scripts/build.mjs [--dev] [--names]   (--dev: unoptimised, faster to compile; --names: a release build
// whose wasm keeps its function names, for CPU profiles: larger, never to ship)
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { packageReadme } from "./package-readme.mjs";
import { inlineCatch } from "./inline-catch.mjs";
import { shortenImports } from "./short-imports.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dev = process.argv.includes("--dev");
const names = process.argv.includes("--names");
const out = join(root, "pkg");
const template = join(root, "pkg-template");
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` };
/** The API files shared by every target; copied as written (ESM) or transpiled (CJS), never forked. */
const SHARED = ["api.js", "agent.js", "ending.js", "errors.js", "journal.js", "lazy.js", "overflow.js", "partial-json.js", "proxy.js", "streams.js", "trap.js", "usage.js"];
/**
 * Functions api.js calls while it is evaluated (for its constant exports). dist/web/core.js answers them from
 * values read here from this build's wasm, since ES module evaluation runs api.js before any entry initialises.
 */
const PRE_INIT = ["version", "snapshotVersion", "defaultAgentIdentity", "builtinApis"];

const started = Date.now();

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")}: exit ${code}`))));
  });
}

/**
 * The package's wasm module: the loop (agentLoop, Agent, ...), the crate's `loop` feature. The built-in providers are
 * not in it (issue 43): they are plain JS (pkg-template/providers/, bundled below into builtin-providers.js), loaded
 * on the first request to a built-in provider.
 */
const MODULES = [{ feature: "loop", name: "agent_loop_wasm", snippets: "snippets" }];
/**
 * Test-only, never in pkg/: the loop module with the `parity` feature, whose hidden `__fastPath` export runs each fast
 * path as its Rust reference or its JS twin (tests/js/parity.test.mjs). Built for Node alone, not optimised (the
 * release profile, so its limits are the package's), into target/parity/ as dist/node lays a module out.
 */
const PARITY = { feature: "parity", name: "agent_loop_wasm", snippets: "snippets" };
const wasmOf = (m) => `${m.name}_bg.wasm`;
const glueOf = (m) => `${m.name}.js`;
const [LOOP] = MODULES;
const [WASM, GLUE] = [wasmOf(LOOP), glueOf(LOOP)];

function wasmPack(target, m) {
  // wasm-bindgen writes the snippets it is told of and deletes none: a snippet file renamed or removed since the last
  // build would otherwise be copied into pkg/ below.
  rmSync(join(built(target, m), "snippets"), { recursive: true, force: true });
  return run("wasm-pack", [
    "build", "--target", target, "--out-dir", built(target, m),
    "--out-name", m.name, "--weak-refs", "--no-pack", "--no-typescript", "--no-gitignore", "--no-opt",
    dev ? "--dev" : "--release", "--", "--no-default-features", "--features", m.feature,
  ]);
}
const built = (target, m) => join(root, "target", "wasm-pack", `${target}-${m.feature}`);

/** wasm-pack's release wasm-opt arguments, from Cargo.toml's [package.metadata.wasm-pack.profile.release]. */
function wasmOptArgs() {
  const toml = readFileSync(join(root, "Cargo.toml"), "utf8");
  const section = /^\[package\.metadata\.wasm-pack\.profile\.release\]\s*\nwasm-opt\s*=\s*\[([^\]]*)\]/m.exec(toml);
  if (!section) return ["-O"]; // wasm-pack's default
  return [...section[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
}

// One cargo compile per module (the second wasm-pack run of a module finds it done) and two wasm-bindgen passes,
// without wasm-pack's wasm-opt: the two targets differ only in their JS glue, so when a module's .wasm files are
// byte-identical (checked) wasm-opt runs once and both targets get its output; otherwise each file is optimised.
for (const m of MODULES) {
  await wasmPack("web", m);
  await wasmPack("nodejs", m);
}
await wasmPack("nodejs", PARITY);
if (!dev) {
  const t = Date.now();
  const optimise = (file) => run("wasm-opt", [file, "-o", file, ...wasmOptArgs(), ...(names ? ["-g"] : [])]);
  for (const m of MODULES) {
    const [webWasm, nodeWasm] = [join(built("web", m), wasmOf(m)), join(built("nodejs", m), wasmOf(m))];
    if (readFileSync(webWasm).equals(readFileSync(nodeWasm))) {
      await optimise(webWasm);
      cpSync(webWasm, nodeWasm);
    } else {
      await Promise.all([optimise(webWasm), optimise(nodeWasm)]);
    }
  }
  console.log(`wasm-opt ${wasmOptArgs().join(" ")}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
}

// The glue's own imports renamed `$0`, `$1`, … in each module's wasm and both glues (scripts/short-imports.mjs).
for (const m of [...MODULES, PARITY]) {
  const targets = (m === PARITY ? ["nodejs"] : ["web", "nodejs"]).map((t) => built(t, m));
  shortenImports(targets.map((d) => join(d, wasmOf(m))), targets.map((d) => join(d, glueOf(m))), `./${m.name}_bg.js`);
  // The imports that may throw catch in place instead of through `handleError` (scripts/inline-catch.mjs).
  inlineCatch(targets.map((d) => join(d, glueOf(m))));
}

/** A module's glue as wasm-bindgen wrote it (after the two rewrites above). */
const glueText = (target, m) => readFileSync(join(built(target, m), glueOf(m)), "utf8");

/**
 * The built-in providers (issue 43): plain JS from pkg-template/providers/ (entry driver.js, `streamBuiltin`), bundled
 * into one file per format (ES module for dist/web, CommonJS for dist/node), not minified (the app's bundler does),
 * that the entry's providers.js loads on the first request to a built-in provider, so a page that brings its own stream
 * function never fetches it. What it imports from the package's shared files (usage.js) stays an import of the file
 * beside it (one copy in an app); the loop's snippets it uses (src/js/snippets/: pure helpers such as `errorMessage`)
 * are bundled in; nothing else may be imported.
 */
async function bundleProviders(file, format) {
  const esbuild = createRequire(join(root, "package.json"))("esbuild");
  const shared = {
    name: "shared-files",
    setup(b) {
      b.onResolve({ filter: /^\.\.\/[\w-]+\.js$/ }, (args) => {
        const name = args.path.slice(3);
        if (args.resolveDir !== join(template, "providers") || !SHARED.includes(name)) return undefined;
        return { path: `./${name}`, external: true };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [join(template, "providers", "driver.js")],
    outfile: file, bundle: true, format, platform: "neutral", target: "es2020", write: true, metafile: true,
    plugins: [shared], legalComments: "none", logLevel: "silent",
    banner: { js: "// agent-loop-wasm's built-in providers (issue 43), bundled from pkg-template/providers/ by scripts/build.mjs." },
  });
  const outside = Object.keys(result.metafile.inputs).filter((f) => !/^(pkg-template\/providers|src\/js\/snippets)\//.test(f));
  if (outside.length) throw new Error(`build: pkg-template/providers/ imports what it may not: ${outside.join(", ")}`);
}

/** The compaction module (issue 45), as the providers: pkg-template/compaction.js with the loop's snippet helpers it
 *  uses bundled in (`errorMessage`), one file per format, loaded by the entry's providers.js on first use. */
async function bundleCompaction(file, format) {
  const esbuild = createRequire(join(root, "package.json"))("esbuild");
  const result = await esbuild.build({
    entryPoints: [join(template, "compaction.js")],
    outfile: file, bundle: true, format, platform: "neutral", target: "es2020", write: true, metafile: true,
    legalComments: "none", logLevel: "silent",
    banner: { js: "// agent-loop-wasm's compaction (issue 45), bundled from pkg-template/compaction.js by scripts/build.mjs." },
  });
  const outside = Object.keys(result.metafile.inputs).filter((f) => !/^(pkg-template\/compaction\.js|src\/js\/snippets\/)/.test(f));
  if (outside.length) throw new Error(`build: pkg-template/compaction.js imports what it may not: ${outside.join(", ")}`);
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function toCommonJs(source, fileName) {
  const { outputText, diagnostics } = ts.transpileModule(source, {
    fileName,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022, // no down-levelling: the sources are already ES2020
      esModuleInterop: true,
      removeComments: false,
    },
  });
  if (diagnostics?.length) {
    throw new Error(`${fileName}: ${diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("; ")}`);
  }
  if (/\bimport\.meta\b|\bimport\s*\(/.test(outputText)) throw new Error(`${fileName}: ESM-only syntax left in CJS`);
  return outputText;
}

rmSync(out, { recursive: true, force: true });
const node = join(out, "dist", "node");
const web = join(out, "dist", "web");
const deno = join(out, "dist", "deno");
for (const d of [node, web, deno]) mkdirSync(d, { recursive: true });

// dist/web: glue and snippets as wasm-bindgen wrote them, the shared API, the instance holder and three entries.
for (const m of MODULES) {
  writeFileSync(join(web, glueOf(m)), glueText("web", m));
  cpSync(join(built("web", m), wasmOf(m)), join(web, wasmOf(m)));
  cpSync(join(built("web", m), "snippets"), join(web, m.snippets), { recursive: true });
}
for (const f of SHARED) cpSync(join(template, f), join(web, f));
cpSync(join(template, "web-providers.js"), join(web, "providers.js"));
await bundleProviders(join(web, "builtin-providers.js"), "esm");
await bundleCompaction(join(web, "compaction.js"), "esm");
cpSync(join(template, "web-index.js"), join(web, "index.js"));
cpSync(join(template, "web-workerd.js"), join(web, "workerd.js"));
cpSync(join(template, "web-slim.js"), join(web, "slim.js"));

// dist/node: CommonJS throughout.
/** A module as CommonJS in `dir`: its nodejs glue, its wasm, its snippets transpiled. */
function writeNodeModule(dir, m) {
  writeFileSync(join(dir, glueOf(m)), glueText("nodejs", m));
  cpSync(join(built("nodejs", m), wasmOf(m)), join(dir, wasmOf(m)));
  const snippets = join(built("nodejs", m), "snippets");
  for (const file of walk(snippets)) {
    const target = join(dir, m.snippets, relative(snippets, file));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.endsWith(".js") ? toCommonJs(readFileSync(file, "utf8"), file) : readFileSync(file));
  }
}
writeFileSync(join(node, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
for (const m of MODULES) writeNodeModule(node, m);
const parityDir = join(root, "target", "parity");
rmSync(parityDir, { recursive: true, force: true });
mkdirSync(parityDir, { recursive: true });
writeFileSync(join(parityDir, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
writeNodeModule(parityDir, PARITY);
for (const f of SHARED) writeFileSync(join(node, f), toCommonJs(readFileSync(join(template, f), "utf8"), f));
writeFileSync(join(node, "index.cjs"), toCommonJs(readFileSync(join(template, "index.js"), "utf8"), "index.js"));
cpSync(join(template, "node-core.cjs"), join(node, "core.js"));
cpSync(join(template, "node-providers.cjs"), join(node, "providers.js"));
await bundleProviders(join(node, "builtin-providers.js"), "cjs");
await bundleCompaction(join(node, "compaction.js"), "cjs");
cpSync(join(template, "node-slim.cjs"), join(node, "slim.cjs"));

// The ESM face of the CJS entry lists its exports explicitly (no reliance on Node's CJS export detection), so
// `import` and `require` share one module instance: no dual-package hazard.
const requireFromPkg = createRequire(join(node, "index.cjs"));
const nodeApi = requireFromPkg("./index.cjs");
const apiNames = Object.keys(nodeApi).filter((n) => n !== "__esModule" && n !== "default").sort();
const esmFace = (from, names, header) =>
  `${header}\nimport cjs from "${from}";\n\nexport const {\n${names.map((n) => `  ${n},`).join("\n")}\n} = cjs;\n`;
writeFileSync(
  join(node, "index.mjs"),
  esmFace("./index.cjs", apiNames, "// `import \"agent-loop-wasm\"` on Node: the CommonJS entry's exports (one instance for import and require)."),
);
writeFileSync(
  join(node, "slim.mjs"),
  esmFace("./slim.cjs", [...apiNames, "init", "initSync"].sort(), "// `import \"agent-loop-wasm/web\"` on Node: the main entry (already initialised) plus init/initSync, which only resolve."),
);

// dist/web/core.js with the pre-init constants of this build.
const nodeGlue = requireFromPkg(`./${GLUE}`);
const preInit = Object.fromEntries(
  PRE_INIT.map((name) => {
    if (typeof nodeGlue[name] !== "function") throw new Error(`build: the wasm exports no ${name}() (PRE_INIT in scripts/build.mjs)`);
    return [name, JSON.stringify(nodeGlue[name]())];
  }),
);
const coreTemplate = readFileSync(join(template, "web-core.js"), "utf8");
const marker = /^const PRE_INIT = \{\};.*$/m;
if (!marker.test(coreTemplate)) throw new Error("build: pkg-template/web-core.js lacks the `const PRE_INIT = {};` line");
writeFileSync(join(web, "core.js"), coreTemplate.replace(marker, `const PRE_INIT = ${JSON.stringify(preInit)};`));

// dist/deno: the wasm as base64 for Deno 1.x (no read permission needed), over dist/web's holder and API, and the
// newer Deno's way to the same bytes: the source phase of dist/web's .wasm (see pkg-template/deno-index.js).
const wasmBytes = readFileSync(join(web, WASM));
writeFileSync(join(deno, "wasm.js"), `// ${WASM}, base64-encoded by scripts/build.mjs.\nexport const wasmBase64 =\n  "${wasmBytes.toString("base64")}";\n`);
writeFileSync(
  join(deno, "wasm-source.js"),
  `// ${WASM} of dist/web as a compiled WebAssembly.Module, for a Deno with source-phase Wasm imports (a syntax\n// error before them: the wasm then comes from ./wasm.js).\nimport source wasmModule from "../web/${WASM}";\nexport { wasmModule };\n`,
);
cpSync(join(template, "deno-index.js"), join(deno, "index.js"));
cpSync(join(template, "deno-slim.js"), join(deno, "slim.js"));

// A wasm-free companion entry, `agent-loop-wasm/<name>` (mcp, ui, otel, testing, models): the ES module in dist/web
// (Deno re-exports it), a CommonJS copy in dist/node with an ESM face, so import and require share one module.
function companionEntry(name, source, names) {
  cpSync(join(template, `${name}.js`), join(web, `${name}.js`));
  writeFileSync(join(node, `${name}.cjs`), toCommonJs(source, `${name}.js`));
  writeFileSync(
    join(node, `${name}.mjs`),
    esmFace(`./${name}.cjs`, names, `// \`import "agent-loop-wasm/${name}"\` on Node: the CommonJS entry's exports (one instance for import and require).`),
  );
  writeFileSync(join(deno, `${name}.js`), `// \`agent-loop-wasm/${name}\` on Deno: the ES module of dist/web (it needs no wasm).\nexport * from "../web/${name}.js";\n`);
}

/** Requires dist/node/<name>.cjs and checks that it exports exactly `names` (the names read off its source). */
function checkExports(name, names) {
  const loaded = createRequire(join(node, `${name}.cjs`))(`./${name}.cjs`);
  const found = Object.keys(loaded).filter((n) => n !== "__esModule").sort();
  if (found.join() !== names.join()) throw new Error(`build: dist/node/${name}.cjs exports ${found} but the source lists ${names}`);
}

// agent-loop-wasm/mcp (issue 18): plain JS over the MCP SDK (a peer dependency), no wasm. ESM in dist/web (Deno
// re-exports it), CJS in dist/node with an ESM face, so import and require share one module (its registries of
// synced agents and clients). The export names come from the source: requiring mcp.cjs here would need the SDK.
const mcpSource = readFileSync(join(template, "mcp.js"), "utf8");
const mcpNames = [...mcpSource.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1]).sort();
if (mcpNames.length === 0) throw new Error("build: pkg-template/mcp.js exports no function");
companionEntry("mcp", mcpSource, mcpNames);

// agent-loop-wasm/ui (issue 31): plain JS importing only its parts and errors.js (no wasm, no SDK), laid out as ./mcp is: ESM in dist/web
// (Deno re-exports it), CJS in dist/node with an ESM face, so import and require share one module.
const uiSource = readFileSync(join(template, "ui.js"), "utf8");
const uiNames = [...uiSource.matchAll(/^export \{([^}]*)\} from "\.\/ui-[\w-]+\.js";$/gm)].flatMap((m) => m[1].split(",").map((n) => n.trim())).sort();
if (uiNames.length === 0) throw new Error("build: pkg-template/ui.js exports nothing");
// Its parts: ui-*.js beside it. Each may import only another part or the error classes (no wasm, no SDK).
const uiParts = readdirSync(template).filter((f) => /^ui-[\w-]+\.js$/.test(f)).sort();
for (const f of ["ui.js", ...uiParts]) {
  const text = readFileSync(join(template, f), "utf8");
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)) {
    if (!/^\.\/(errors|usage|ui-[\w-]+)\.js$/.test(m[1])) throw new Error(`build: pkg-template/${f} may import only ./errors.js, ./usage.js and ./ui-*.js (imports ${m[1]})`);
  }
  if (f !== "ui.js") {
    cpSync(join(template, f), join(web, f));
    writeFileSync(join(node, f), toCommonJs(text, f));
  }
}
companionEntry("ui", uiSource, uiNames);
checkExports("ui", uiNames);


// agent-loop-wasm/otel (issue 32): plain JS over @opentelemetry/api (a peer dependency), no wasm, built as the MCP
// entry is. It registers traced configs on a global symbol that api.js reads, so it never imports the main entry.
const otelSource = readFileSync(join(template, "otel.js"), "utf8");
const otelNames = [...otelSource.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1]).sort();
if (otelNames.length === 0) throw new Error("build: pkg-template/otel.js exports no function");
companionEntry("otel", otelSource, otelNames);


// agent-loop-wasm/testing (issue 44): cassettes, plain JS with no wasm and no import, built as the otel entry is.
const testingSource = readFileSync(join(template, "testing.js"), "utf8");
const testingNames = [...testingSource.matchAll(/^export (?:async )?(?:function|const|class) (\w+)/gm)].map((m) => m[1]).sort();
if (testingNames.length === 0) throw new Error("build: pkg-template/testing.js exports nothing");
if (/^\s*import\b/m.test(testingSource)) throw new Error("build: pkg-template/testing.js must import nothing");
companionEntry("testing", testingSource, testingNames);
checkExports("testing", testingNames);


// agent-loop-wasm/models (issue 42): the model catalogue, plain JS with no wasm, laid out as ./ui is: ESM in dist/web
// (Deno re-exports it), CJS in dist/node with an ESM face. Its imports are its data file, copied (ESM) or transpiled
// (CJS) beside it, and the error classes (errors.js, shared); the main entry imports neither models file.
const modelsSource = readFileSync(join(template, "models.js"), "utf8");
const modelsNames = [...modelsSource.matchAll(/^export (?:async )?(?:function|const|class) (\w+)/gm)].map((m) => m[1]).sort();
if (modelsNames.length === 0) throw new Error("build: pkg-template/models.js exports nothing");
const modelsImports = [...modelsSource.matchAll(/^\s*import\b[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
if (modelsImports.sort().join() !== "./errors.js,./models-data.js") {
  throw new Error(`build: pkg-template/models.js must import only ./models-data.js and ./errors.js (imports ${modelsImports})`);
}
const modelsData = readFileSync(join(template, "models-data.js"), "utf8");
if (/^\s*import\b/m.test(modelsData)) throw new Error("build: pkg-template/models-data.js must import nothing (it is data)");
cpSync(join(template, "models-data.js"), join(web, "models-data.js"));
writeFileSync(join(node, "models-data.js"), toCommonJs(modelsData, "models-data.js"));
companionEntry("models", modelsSource, modelsNames);
checkExports("models", modelsNames);

// The declarations, and their CommonJS twins (`.d.cts`, the same text with `./x.js` specifiers as `./x.cjs`): under
// "type": "module" a `.d.ts` is an ES module to TypeScript, which a CommonJS consumer (`module: node16`) may not
// `require`. The exports map gives `require` the `.d.cts` (tests: scripts/pack-test.mjs, the types targets).
const DECLARATIONS = ["index.d.ts", "ai.d.ts", "tools.d.ts", "web.d.ts", "mcp.d.ts", "ui.d.ts", "otel.d.ts", "models.d.ts", "testing.d.ts"];
for (const f of DECLARATIONS) {
  const text = readFileSync(join(template, f), "utf8");
  writeFileSync(join(out, f), text);
  const cjs = text.replace(/(from\s+"\.\/[\w-]+)\.js"/g, '$1.cjs"');
  if (/from\s+"\.\/[\w-]+\.js"/.test(cjs)) throw new Error(`build: ${f}: a relative specifier the .d.cts twin does not map`);
  writeFileSync(join(out, f.replace(/\.d\.ts$/, ".d.cts")), cjs);
}
const pkgManifest = JSON.parse(readFileSync(join(template, "package.json"), "utf8"));
// Every declaration file ships: npm pack takes only what "files" lists (a missing one fails a user's types only).
for (const f of DECLARATIONS.flatMap((d) => [d, d.replace(/\.d\.ts$/, ".d.cts")])) {
  if (!pkgManifest.files.includes(f)) throw new Error(`build: pkg-template/package.json "files" lacks ${f}`);
}
writeFileSync(join(out, "README.md"), packageReadme(readFileSync(join(root, "README.md"), "utf8"), pkgManifest.repository));

const cargoVersion = /^version = "([^"]+)"/m.exec(readFileSync(join(root, "Cargo.toml"), "utf8"))[1];
const pkg = JSON.parse(readFileSync(join(template, "package.json"), "utf8"));
pkg.version = cargoVersion;
writeFileSync(join(out, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);

// Self-check: the slim entry must evaluate before init (api.js may only call PRE_INIT functions at top level),
// answer with this build's constants, and refuse other calls with the exact error.
let slim;
try {
  slim = await import(pathToFileURL(join(web, "slim.js")).href);
} catch (e) {
  throw new Error(`build: dist/web/slim.js fails before init; does api.js call a core function at top level that PRE_INIT in scripts/build.mjs lacks? (${e.message})`);
}
for (const name of ["VERSION", "SNAPSHOT_VERSION", "DEFAULT_AGENT_IDENTITY", "BUILTIN_APIS"]) {
  if (JSON.stringify(slim[name]) !== JSON.stringify(nodeApi[name])) throw new Error(`build: dist/web ${name} differs from dist/node`);
}
try {
  slim.runToolCall({ id: "x", name: "x", arguments: {} }, {});
  throw new Error("build: dist/web/slim.js ran before init");
} catch (e) {
  if (!String(e.message).startsWith("agent-loop-wasm is not initialized")) throw e;
}

const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(
  `built pkg/ (${dev ? "dev" : "release"}${names ? ", with function names" : ""}, wasm ${kib(wasmBytes.length)} web, ${kib(statSync(join(node, WASM)).size)} node) ` +
    `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
