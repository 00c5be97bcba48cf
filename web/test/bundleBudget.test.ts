/**
 * The dashboard's initial JavaScript stays within 150 KB gzip (issue 36): the production
 * build's entry script and the modules index.html preloads with it, gzipped as a server
 * sends them. What loads on demand (the job page, the log viewer, the charts) is printed
 * beside it, not counted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildDashboard } from './helpers/dashboard.js';

const BUDGET = 150 * 1000;

describe('bundle budget', () => {
  it('the initial JavaScript is at most 150 KB gzip', () => {
    const dir = buildDashboard();
    const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
    const initial = [...html.matchAll(/<script[^>]+src="([^"]+\.js)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g)].map((m) =>
      (m[1] ?? m[2])!.replace(/^\//, ''),
    );
    expect(initial.length).toBeGreaterThan(0);
    const gz = (f: string) => gzipSync(readFileSync(path.join(dir, f))).length;
    const sizes = initial.map((f) => [f, gz(f)] as const);
    const total = sizes.reduce((s, [, n]) => s + n, 0);
    const lazy = readdirSync(path.join(dir, 'assets'))
      .filter((f) => f.endsWith('.js') && !initial.includes(`assets/${f}`))
      .map((f) => `${f} ${(gz(`assets/${f}`) / 1000).toFixed(1)} KB`);
    console.log(
      `initial JS ${(total / 1000).toFixed(1)} KB gzip (${sizes.map(([f, n]) => `${f} ${(n / 1000).toFixed(1)} KB`).join(', ')}); on demand: ${lazy.join(', ')}`,
    );
    expect(total).toBeLessThanOrEqual(BUDGET);
  });
});
