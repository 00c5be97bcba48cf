import { describe, expect, it } from 'vitest';
import { notebookSupport } from './notebookSupport.js';
import { execCommand } from './execCommand.js';
import { probePython } from './pythonProbe.js';

const runtime = (modules: string[]) => ({ path: '/usr/bin/python3', version: '3.11.2', torch: null, numpy: null, modules });

describe('notebookSupport', () => {
  it('says nothing when the chosen Python has nbclient and ipykernel, or there is no Python', () => {
    expect(
      notebookSupport({
        python: '/usr/bin/python3',
        pythons: [runtime(['ipykernel', 'nbclient', 'numpy'])],
        install: { enabled: false, index: null },
      }),
    ).toBeNull();
    expect(notebookSupport({ python: null, pythons: [], install: { enabled: false, index: null } })).toBeNull();
  });

  it('names what is missing, the Debian packages, and what happens to notebook jobs', () => {
    const caps = { python: '/opt/py/bin/python3', pythons: [{ ...runtime(['nbclient']), path: '/opt/py/bin/python3' }] };
    expect(notebookSupport({ ...caps, install: { enabled: true, index: null } })).toBe(
      'notebooks: /opt/py/bin/python3 lacks ipykernel (Debian/Ubuntu: apt-get install python3-nbclient python3-ipykernel); a notebook job installs them in its setup phase on this worker',
    );
    expect(notebookSupport({ ...caps, pythons: [{ ...caps.pythons[0]!, modules: [] }], install: { enabled: false, index: null } })).toBe(
      'notebooks: /opt/py/bin/python3 lacks nbclient and ipykernel (Debian/Ubuntu: apt-get install python3-nbclient python3-ipykernel); notebook jobs go to workers that have them (the setup phase is off here)',
    );
  });

  it("this machine's Debian Python (npm test installs python3-nbclient and python3-ipykernel): probed, nothing to say", async () => {
    const { probe } = await probePython('/usr/bin/python3', execCommand, 60_000);
    expect(probe!.runtime.modules).toEqual(expect.arrayContaining(['nbclient', 'ipykernel']));
    expect(notebookSupport({ python: probe!.runtime.path, pythons: [probe!.runtime], install: { enabled: true, index: null } })).toBeNull();
  }, 90_000);
});
