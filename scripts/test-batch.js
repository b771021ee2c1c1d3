#!/usr/bin/env node
// Runs compiled test files one after another in this one process, as one tap run: their tests
// queue on tap's root test in the order the files are named, and the output ends with one count
// for them all. The suite's runner (run-tests.js) runs its unit test files so, a folder at a time:
// a process costs Node.js's start and tap's loading, more than most unit test files take.
'use strict';
const path = require('node:path');

for (const file of process.argv.slice(2)) require(path.resolve(file));
