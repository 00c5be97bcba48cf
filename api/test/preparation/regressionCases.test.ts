/**
 * Every regression case kept under cases/ (written by `chatgpu records case`, see
 * src/preparation/regressionCase.ts) is re-checked with today's toolkit: its outcome must be
 * the one the case expects — REJECTED for a known limitation (a transformation that starts
 * "passing" it silently is caught), ACCEPTED for a fixed one (a regression is caught).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPython } from '../../src/preparation/findPython.js';
import { checkCase, readCase } from '../../src/preparation/regressionCase.js';

const root = path.join(import.meta.dirname, 'cases');
const cases = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const python = (await findPython({ modules: ['numpy', 'torch'] }))?.path;

describe('kept regression cases', () => {
  it('the folder holds cases, and a Python with numpy and torch is here to check them', () => {
    expect(cases.length).toBeGreaterThanOrEqual(2);
    expect(python, 'npm test installs python3-torch and python3-numpy').toBeTruthy();
  });

  it.each(cases)('%s gives its expected outcome', { timeout: 120_000 }, async (name) => {
    const dir = path.join(root, name);
    const { spec } = await readCase(dir);
    const result = await checkCase(dir, { python: python! });
    expect(result.outcome, `${result.reason}; not checked: ${result.notChecked.join(', ')}`).toBe(spec.expect);
  });
});
