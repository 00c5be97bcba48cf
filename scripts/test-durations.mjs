#!/usr/bin/env node
// Writes scripts/test-durations.json (seconds per test file, from the JSON report of the last
// `npm test`), which scripts/testSequencer.ts uses to run the longest files first.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const report = JSON.parse(readFileSync(path.join(root, 'node_modules/.cache/vitest-report.json'), 'utf8'));
const table = {};
for (const r of report.testResults)
  table[path.relative(root, r.name).split(path.sep).join('/')] = Math.round((r.endTime - r.startTime) / 100) / 10;
const sorted = Object.fromEntries(Object.entries(table).sort((a, b) => b[1] - a[1]));
writeFileSync(path.join(root, 'scripts/test-durations.json'), `${JSON.stringify(sorted, null, 1)}\n`);
console.log(
  `scripts/test-durations.json: ${Object.keys(sorted).length} files, ${Math.round(Object.values(sorted).reduce((s, x) => s + x, 0))} s in all`,
);
