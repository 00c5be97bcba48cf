import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { dependencies } from './dependencies.js';

const facts = { entryPoints: [entry('app.py')], imports: ['pandas'], importsByFile: { 'app.py': { thirdParty: ['pandas'], local: [] } } };

describe('dependencies', () => {
  it('a third-party import is resolved for the workload; what can be installed is installed, what cannot stops the job', () => {
    expect(runRules({ request: 'run it', facts, reads: { 'app.py': '' } }, dependencies).answer).toEqual({
      name: 'check_dependencies',
      args: { files: ['app.py'], workload: 'python' },
    });
    const ok = runRules(
      {
        request: 'run it',
        facts,
        reads: { 'app.py': '' },
        tools: [['check_dependencies', { imports: [], install: ['pandas==2.1.4'], unavailable: [], summary: null }]],
      },
      dependencies,
    );
    expect(ok.answer).toBeNull();
    expect(ok.planning.install).toEqual(['pandas==2.1.4']);
    const no = runRules(
      {
        request: 'run it',
        facts,
        reads: { 'app.py': '' },
        tools: [['check_dependencies', { imports: [], install: [], unavailable: ['pandas'], summary: 'No worker can install pandas.' }]],
      },
      dependencies,
    );
    expect(no.answer).toEqual({ name: 'give_up', args: { reason: 'No worker can install pandas.' } });
  });

  it('only torch and numpy: nothing to check; a module a run could not import (a replan) is checked', () => {
    expect(
      runRules(
        {
          request: 'run it',
          facts: { entryPoints: [entry('app.py')], importsByFile: { 'app.py': { thirdParty: ['numpy'], local: [] } } },
          reads: { 'app.py': '' },
        },
        dependencies,
      ).answer,
    ).toBeNull();
    const replan = runRules(
      {
        request: 'run it\nReplan 1: the run failed: missing module: yaml',
        facts: { entryPoints: [entry('app.py')] },
        reads: { 'app.py': '' },
      },
      dependencies,
    );
    expect(replan.answer).toEqual({
      name: 'check_dependencies',
      args: { files: ['app.py'], workload: 'python', missingAtRunTime: ['yaml'] },
    });
  });
});
