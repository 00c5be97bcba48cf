import { describe, expect, it } from 'vitest';
import { toolCallLine } from '../src/features/jobs/toolCallWords';

describe("an agent's tool call in words", () => {
  it('says what was asked and what came back, for known tools and unknown ones', () => {
    expect(toolCallLine('read_file', '{"path":"train.py"}', '{"path":"train.py","content":"import torch\\n"}', true)).toBe(
      'read train.py → 13 characters',
    );
    expect(toolCallLine('list_files', '{}', '{"files":[{"path":"a.py"},{"path":"b.py"}]}', true)).toBe(
      "listed the project's files → 2 files",
    );
    expect(toolCallLine('ask_user', '{"question":"Which script should run?","choices":["a","b"]}', '{"answer":"train.py"}', true)).toBe(
      'asked you: Which script should run? → train.py',
    );
    expect(
      toolCallLine('submit_plan', '{"summary":"Run train.py on a CPU worker."}', '{"error":"the command leaves the project folder"}', true),
    ).toBe('submitted a plan: Run train.py on a CPU worker. → an error: the command leaves the project folder');
    expect(toolCallLine('network_capacity', '{}', undefined, false)).toBe('asked which workers the network has → waiting for the result');
    expect(toolCallLine('frobnicate', '{"level":3,"deep":{"x":1}}', 'plain text back', true)).toBe(
      'used frobnicate (level 3) → plain text back',
    );
  });
});
