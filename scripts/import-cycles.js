#!/usr/bin/env node
// Finds import cycles among the project's TypeScript files, type-only imports included: a cycle
// of `import type` still ties two modules' designs together. Prints every cycle and exits 1 when
// there is one. Uses the TypeScript compiler's own pre-processor to list a file's imports, so
// every form counts: import, import type, export ... from, import(), require().
'use strict';
const { readdirSync, statSync, existsSync, readFileSync } = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..');

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The project file a relative specifier names, or null for a package or a missing file. */
function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base + '.ts', path.join(base, 'index.ts'), base]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return null;
}

/** file → the project files it imports. */
function importGraph(dirs) {
  const graph = new Map();
  for (const dir of dirs) {
    for (const file of sourceFiles(path.join(root, dir))) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const deps = new Set();
      for (const ref of info.importedFiles) {
        const target = resolve(file, ref.fileName);
        if (target) deps.add(target);
      }
      graph.set(file, deps);
    }
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const idx = new Map();
  const low = new Map();
  const found = [];
  function visit(v) {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), idx.get(w)));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v).has(v)) found.push(component);
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** One concrete loop through a component, for the message: a → b → … → a. */
function loopIn(graph, component) {
  const members = new Set(component);
  const start = component.slice().sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v)) {
      if (!members.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let u = v; u !== start; u = prev.get(u)) loop.splice(1, 0, u);
        loop.push(start);
        return loop;
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

function findCycles(dirs = ['src', 'bench', 'scripts']) {
  const graph = importGraph(dirs.filter((d) => existsSync(path.join(root, d))));
  return cycles(graph).map((c) => loopIn(graph, c).map((f) => path.relative(root, f)));
}

module.exports = { findCycles };

if (require.main === module) {
  const found = findCycles();
  for (const loop of found) process.stdout.write(`import cycle: ${loop.join(' -> ')}\n`);
  process.stdout.write(`${found.length} import cycle${found.length === 1 ? '' : 's'}\n`);
  process.exit(found.length === 0 ? 0 : 1);
}
