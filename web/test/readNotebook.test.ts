import { describe, expect, it } from 'vitest';
import { readNotebook, stripAnsi } from '../src/features/files/readNotebook';

const nb = (cells: unknown[], nbformat: unknown = 4) => JSON.stringify({ nbformat, nbformat_minor: 5, metadata: {}, cells });
const code = (outputs: unknown[], n: number | null = 1) => ({ cell_type: 'code', execution_count: n, source: ['x = 1\n', 'x'], outputs });

describe('an executed notebook read for the job page', () => {
  it('keeps the cells in order: markdown and raw as text, code with its count, source lists joined', () => {
    const r = readNotebook(
      nb([
        { cell_type: 'markdown', source: ['# Title\n', 'A <b>bold</b> claim'] },
        code([], 3),
        { cell_type: 'code', execution_count: null, source: 'never ran' },
        { cell_type: 'raw', source: 'raw text' },
      ]),
    );
    expect(r).toEqual({
      ok: true,
      cells: [
        { kind: 'markdown', source: '# Title\nA <b>bold</b> claim' },
        { kind: 'code', executionCount: 3, source: 'x = 1\nx', outputs: [] },
        { kind: 'code', executionCount: null, source: 'never ran', outputs: [] },
        { kind: 'raw', source: 'raw text' },
      ],
    });
  });

  it('keeps stdout and stderr apart, images as data URLs, text/plain; never html, svg or javascript', () => {
    const r = readNotebook(
      nb([
        code([
          { output_type: 'stream', name: 'stdout', text: ['a\n', 'b\n'] },
          { output_type: 'stream', name: 'stderr', text: '\u001b[33mwarn\u001b[0m\n' },
          { output_type: 'stream', name: 'stdout', text: ' 10%\r 50%\r100%\ndone\r\n' },
          { output_type: 'display_data', data: { 'image/png': 'iVBO\nRw==\n', 'text/plain': '<Figure size 640x480>' }, metadata: {} },
          { output_type: 'display_data', data: { 'image/png': 'not base64 <script>', 'text/plain': 'fallback' }, metadata: {} },
          { output_type: 'execute_result', execution_count: 1, data: { 'text/html': '<table/>', 'text/plain': ['   a\n', '0  1'] } },
          { output_type: 'display_data', data: { 'text/html': '<script>alert(1)</script>' } },
          { output_type: 'display_data', data: { 'image/svg+xml': '<svg onload="alert(1)"/>' } },
          { output_type: 'display_data', data: { 'application/javascript': 'alert(1)' } },
          { output_type: 'display_data', data: { 'application/vnd.jupyter.widget-view+json': {} } },
          { output_type: 'display_data', data: {} },
        ]),
      ]),
    );
    expect(r.ok && r.cells[0]!.kind === 'code' && r.cells[0]!.outputs).toEqual([
      { kind: 'stream', name: 'stdout', text: 'a\nb\n' },
      { kind: 'stream', name: 'stderr', text: 'warn\n' },
      { kind: 'stream', name: 'stdout', text: '100%\ndone\n' },
      { kind: 'image', dataUrl: 'data:image/png;base64,iVBORw==', alt: '<Figure size 640x480>' },
      { kind: 'text', text: 'fallback' },
      { kind: 'text', text: '   a\n0  1' },
      { kind: 'hidden', what: 'html' },
      { kind: 'hidden', what: 'svg' },
      { kind: 'hidden', what: 'javascript' },
      { kind: 'hidden', what: 'application/vnd.jupyter.widget-view+json' },
      { kind: 'hidden', what: 'empty' },
    ]);
  });

  it('shows an error as name, value and traceback without ANSI escape codes', () => {
    const r = readNotebook(
      nb([
        code([
          {
            output_type: 'error',
            ename: 'ZeroDivisionError',
            evalue: 'division by zero',
            traceback: [
              '\u001b[0;31m-----\u001b[0m',
              '\u001b[0;32m----> 1\u001b[0m \u001b[38;5;241m1\u001b[39m\u001b[38;5;241m/\u001b[39m\u001b[38;5;241m0\u001b[39m',
              '\u001b]8;;file:///x.py\u0007x.py\u001b]8;;\u0007 \u001b(B\u001b[1;31mZeroDivisionError\u001b[0m: division by zero',
            ],
          },
        ]),
      ]),
    );
    expect(r.ok && r.cells[0]!.kind === 'code' && r.cells[0]!.outputs).toEqual([
      {
        kind: 'error',
        ename: 'ZeroDivisionError',
        evalue: 'division by zero',
        traceback: '-----\n----> 1 1/0\nx.py ZeroDivisionError: division by zero',
      },
    ]);
    expect(stripAnsi('\u001b[1mbold\u001b[0m\u001b(B\u001b7 x\u001b')).toBe('bold x');
  });

  it('says why a file is not a notebook it can show', () => {
    expect(readNotebook('{"cells": [')).toEqual({ ok: false, reason: 'it is not valid JSON' });
    expect(readNotebook('[1, 2]')).toEqual({ ok: false, reason: 'it is not a Jupyter notebook (no list of cells)' });
    expect(readNotebook(JSON.stringify({ nbformat: 4 }))).toEqual({ ok: false, reason: 'it is not a Jupyter notebook (no list of cells)' });
    expect(readNotebook(nb([], 3))).toEqual({ ok: false, reason: 'it is nbformat 3; only version 4 notebooks are shown' });
    expect(readNotebook(nb([{ cell_type: 'code', source: 'x' }, 'oops']))).toEqual({
      ok: false,
      reason: 'it is not a valid notebook: cell 2 is not a cell',
    });
    expect(readNotebook(nb([{ cell_type: 'heading', source: 'x' }]))).toEqual({
      ok: false,
      reason: 'it is not a valid notebook: cell 1 has an unknown cell type',
    });
    expect(readNotebook(nb([{ cell_type: 'code', source: 7 }]))).toEqual({
      ok: false,
      reason: "it is not a valid notebook: cell 1's source is not text",
    });
    expect(readNotebook(nb([{ cell_type: 'code', source: '', outputs: {} }]))).toEqual({
      ok: false,
      reason: "it is not a valid notebook: cell 1's outputs are not a list",
    });
    expect(readNotebook(nb([code([{ output_type: 'pager' }])]))).toEqual({
      ok: false,
      reason: "it is not a valid notebook: cell 1's output 1 has an unknown output type",
    });
  });
});
