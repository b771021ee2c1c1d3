#!/usr/bin/env node
// Writes docs/screens/*.png: every screen of the web client at desktop and phone width, taken in
// headless Chromium against a real server with sample data. Needs a build first (npm run build).
'use strict';
const path = require('node:path');
const { existsSync } = require('node:fs');

const compiled = path.join(__dirname, '..', 'dist', 'test', 'web', 'screenshots.js');
if (!existsSync(compiled)) {
  process.stderr.write('screenshots: run `npm run build` first\n');
  process.exit(2);
}
require(compiled);
