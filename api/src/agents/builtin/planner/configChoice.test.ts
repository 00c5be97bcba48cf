import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { configChoice } from './configChoice.js';

const train = entry('train.py', { cli: 'configurator', flags: [{ flag: '--max_iters', default: '5000', type: 'int', help: null }] });
const files = ['config/train_shakespeare_char.py', 'config/finetune_shakespeare.py', 'config/train_gpt2.py'];
const CONFIG = "out_dir = 'out-shakespeare-char'\ndataset = 'shakespeare_char'\nbatch_size = 64 # per step\n";

describe('configChoice', () => {
  it('the config the request names exactly is read and its literal settings kept (not confused with finetune_shakespeare)', () => {
    const r = { request: 'train with config/train_shakespeare_char.py', facts: { entryPoints: [train] }, files, reads: { 'train.py': '' } };
    expect(runRules(r, configChoice).answer).toEqual({ name: 'read_file', args: { path: 'config/train_shakespeare_char.py' } });
    const { planning } = runRules({ ...r, reads: { ...r.reads, 'config/train_shakespeare_char.py': CONFIG } }, configChoice);
    expect(planning.configFile).toBe('config/train_shakespeare_char.py');
    expect(planning.configSettings).toEqual({ out_dir: 'out-shakespeare-char', dataset: 'shakespeare_char', batch_size: '64' });
  });

  it('none named: the user is asked, the script’s own defaults being a choice; not a configurator: nothing to choose', () => {
    const { answer } = runRules({ request: 'train it', facts: { entryPoints: [train] }, files, reads: { 'train.py': '' } }, configChoice);
    expect(answer?.name).toBe('ask_user');
    expect(answer?.args.choices).toEqual([...[...files].sort(), "train.py's own defaults"]);
    const defaults = runRules(
      {
        request: 'train it',
        facts: { entryPoints: [train] },
        files,
        reads: { 'train.py': '' },
        answers: ["Which configuration should train.py run with?: train.py's own defaults"],
      },
      configChoice,
    );
    expect(defaults.answer).toBeNull();
    expect(defaults.planning.configFile).toBeNull();
    expect(
      runRules({ request: 'train it', facts: { entryPoints: [entry('train.py')] }, files, reads: { 'train.py': '' } }, configChoice)
        .planning.configFile,
    ).toBeNull();
  });
});
