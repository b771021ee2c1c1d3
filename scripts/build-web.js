#!/usr/bin/env node
// Builds the web client (web/) into dist/web: the page, its scripts and styles under hashed names,
// each also precompressed as .gz and .br, and manifest.json describing them (src/web/manifest.ts).
// Fails when the first screen's JavaScript, gzipped, is over the budget.
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const source = path.join(root, 'web');
const out = path.join(root, 'dist', 'web');
const BUDGET_GZIP_BYTES = 100 * 1024;

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

function gzip(bytes) {
  return zlib.gzipSync(bytes, { level: 9 });
}

function brotli(bytes) {
  return zlib.brotliCompressSync(bytes, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}

function escapeAttribute(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

async function main() {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: path.join(source, 'src', 'main.ts') },
    bundle: true,
    // The chart library is imported dynamically by the link details screen: splitting keeps it
    // out of the first screen's script.
    splitting: true,
    format: 'esm',
    target: ['chrome100', 'firefox100', 'safari15'],
    minify: true,
    sourcemap: false,
    metafile: true,
    write: false,
    outdir: out + '/app',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });

  // The service worker (Web Push): a classic script of its own, under a name that does not change,
  // since a browser keeps its registration by the script's URL (docs/web.md, "Web Push").
  const worker = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(source, 'sw', 'sw.ts')],
    bundle: true,
    format: 'iife',
    target: ['chrome100', 'firefox100', 'safari16'],
    minify: true,
    sourcemap: false,
    write: false,
    logLevel: 'warning',
  });

  // What the page loads before anything runs: the entry, the chunks it imports statically, and
  // its stylesheet.
  const outputs = result.metafile.outputs;
  const rel = (abs) => path.relative(root, abs).split(path.sep).join('/');
  const byRel = new Map(result.outputFiles.map((f) => [rel(f.path), f]));
  const entryRel = Object.keys(outputs).find((k) => outputs[k].entryPoint && k.endsWith('.js'));
  if (!entryRel) throw new Error('esbuild produced no entry script');
  const firstScreen = new Set();
  const visit = (k) => {
    if (firstScreen.has(k)) return;
    firstScreen.add(k);
    for (const imp of outputs[k].imports) if (imp.kind === 'import-statement' && !imp.external) visit(imp.path);
  };
  visit(entryRel);
  const cssRel = outputs[entryRel].cssBundle;

  rmSync(out, { recursive: true, force: true });
  mkdirSync(path.join(out, 'app'), { recursive: true });
  const files = [];
  const write = (relPath, url, bytes, immutable, first, extra = {}) => {
    const gz = gzip(bytes);
    const br = brotli(bytes);
    const abs = path.join(out, relPath);
    writeFileSync(abs, bytes);
    writeFileSync(abs + '.gz', gz);
    writeFileSync(abs + '.br', br);
    files.push({
      path: relPath,
      url,
      content_type: CONTENT_TYPES[path.extname(relPath)],
      immutable,
      sha256: sha256(bytes),
      bytes: bytes.length,
      gzip_bytes: gz.length,
      br_bytes: br.length,
      first_screen: first,
      ...extra,
    });
  };

  const appUrl = (k) => '/app/' + path.basename(k);
  for (const [k, f] of byRel) {
    if (!CONTENT_TYPES[path.extname(k)]) throw new Error(`unexpected build output ${k}`);
    write('app/' + path.basename(k), appUrl(k), Buffer.from(f.contents), true, firstScreen.has(k));
  }

  write('app/sw.js', '/app/sw.js', Buffer.from(worker.outputFiles[0].contents), false, false, { service_worker: true });

  // The icon is copied under a hashed name like everything else under /app/.
  const icon = readFileSync(path.join(source, 'icon.svg'));
  const iconName = `icon-${sha256(icon).slice(0, 8)}.svg`;
  write('app/' + iconName, '/app/' + iconName, icon, true, false);

  const preloads = [...firstScreen].filter((k) => k !== entryRel).map((k) => `<link rel="modulepreload" href="${escapeAttribute(appUrl(k))}">`);
  const page = readFileSync(path.join(source, 'index.html'), 'utf8')
    .replace('%ICON%', escapeAttribute('/app/' + iconName))
    .replace('%STYLES%', cssRel ? `<link rel="stylesheet" href="${escapeAttribute(appUrl(cssRel))}">` : '')
    .replace('%SCRIPTS%', [...preloads, `<script type="module" src="${escapeAttribute(appUrl(entryRel))}"></script>`].join('\n    '));
  if (/%[A-Z]+%/.test(page)) throw new Error('web/index.html has a placeholder the build does not fill');
  write('index.html', '/', Buffer.from(page), false, false);

  const firstScreenJs = files.filter((f) => f.first_screen).reduce((n, f) => n + f.gzip_bytes, 0);
  const manifest = { version: 1, files, first_screen_js_gzip_bytes: firstScreenJs, budget_gzip_bytes: BUDGET_GZIP_BYTES };
  writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');

  const kb = (n) => (n / 1024).toFixed(1) + ' KB';
  for (const f of files) process.stdout.write(`web: ${f.url.padEnd(36)} ${kb(f.bytes).padStart(9)}  gzip ${kb(f.gzip_bytes).padStart(8)}  br ${kb(f.br_bytes).padStart(8)}${f.first_screen ? '  (first screen)' : ''}\n`);
  process.stdout.write(`web: first screen JavaScript ${kb(firstScreenJs)} gzipped (budget ${kb(BUDGET_GZIP_BYTES)})\n`);
  if (firstScreenJs > BUDGET_GZIP_BYTES) {
    process.stderr.write('web: the first screen JavaScript is over its budget\n');
    process.exit(1);
  }
}

main().catch((err) => {
  process.stderr.write(`web build failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
