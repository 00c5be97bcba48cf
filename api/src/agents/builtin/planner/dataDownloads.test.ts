import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { PlanSchema } from '../../../domain/jobs/planSchema.js';
import { pipelineTask, runTask } from '../../../domain/jobs/acceptPlan.js';
import type { DataDownload } from '../../planner/analyzeProject.js';
import { dataDownloads } from './dataDownloads.js';

const URL = 'https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt';
const PREPARE = `import requests\nurl = '${URL}'\nopen('input.txt', 'w').write(requests.get(url).text)\nopen(os.path.join(os.path.dirname(__file__), 'train.bin'), 'wb').write(b'')\n`;
const TRAIN = "data = np.memmap(os.path.join('data', dataset, 'train.bin'))\n";
const prepDownload: DataDownload = {
  script: 'data/shakespeare_char/prepare.py',
  calls: [{ line: 3, kind: 'requests', call: 'requests.get(url)', replay: null, root: null }],
  urls: [URL],
};

describe('dataDownloads', () => {
  it('a prepare script that downloads: its step is the data download (network, URLs), the plan says so, the run keeps no network', () => {
    const facts = {
      entryPoints: [entry('train.py'), entry('data/shakespeare_char/prepare.py', { cli: null })],
      downloads: [prepDownload],
    };
    const reads = { 'train.py': TRAIN, 'data/shakespeare_char/prepare.py': PREPARE };
    const { planning } = runRules({ request: 'train it', facts, reads }, dataDownloads);
    expect(planning.before).toEqual([
      {
        name: 'prepare-data',
        command: 'cd data/shakespeare_char && python prepare.py',
        produces: ['data/shakespeare_char'],
        network: 'download',
        urls: [URL],
      },
    ]);
    const { answer } = runRules({ request: 'train it', facts, reads });
    expect(answer!.name).toBe('submit_plan');
    const plan = PlanSchema.parse(JSON.parse(JSON.stringify(answer!.args), (_k, v) => (v === null ? undefined : v)));
    expect(plan.summary).toContain(`data/shakespeare_char/prepare.py downloads its data (requests; from ${URL})`);
    expect(plan.summary).toContain('the run has none');
    expect(plan.steps[0]).toContain(`the only step with the network (from ${URL})`);
    // The step's task alone has the network, with the URLs and its script for the cache key; the run has none.
    const step = pipelineTask('j', 'c', plan.before![0]!, {}, { workload: 'python' }, []);
    expect(step.requirements).toMatchObject({
      network: true,
      download: { urls: [URL], files: ['data/shakespeare_char/prepare.py'] },
      outputs: ['data/shakespeare_char'],
    });
    const run = runTask('j', 'c', plan.command, {}, { workload: 'python' }, []);
    expect(run.requirements.network).toBeUndefined();
    expect(run.requirements.download).toBeUndefined();
  });

  it('a torchvision download=True in the entry point: a download-data step runs the calls alone first; the run has none', () => {
    const d: DataDownload = {
      script: 'main.py',
      calls: [
        {
          line: 5,
          kind: 'torchvision',
          call: "datasets.MNIST('data', train=True, download=True, transform=t)",
          replay: "import torchvision; torchvision.datasets.MNIST('data', train=True, download=True)",
          root: 'data',
        },
      ],
      urls: [],
    };
    const { planning } = runRules(
      { request: 'train it', facts: { entryPoints: [entry('main.py')], downloads: [d] }, reads: { 'main.py': 'import torchvision\n' } },
      dataDownloads,
    );
    expect(planning.before).toEqual([
      {
        name: 'download-data',
        command: `python -c "import torchvision; torchvision.datasets.MNIST('data', train=True, download=True)"`,
        produces: ['data'],
        network: 'download',
        urls: [],
      },
    ]);
    expect(planning.downloads[0]).toContain('a download-data step first runs those calls alone');
  });

  it('a download the run itself makes, and cannot be split off, is named in the plan: the run has no network', () => {
    const d: DataDownload = {
      script: 'main.py',
      calls: [{ line: 7, kind: 'urllib', call: "urlretrieve('https://example.org/x.csv', 'x.csv')", replay: null, root: null }],
      urls: ['https://example.org/x.csv'],
    };
    const { planning } = runRules(
      { request: 'train it', facts: { entryPoints: [entry('main.py')], downloads: [d] }, reads: { 'main.py': 'import torchvision\n' } },
      dataDownloads,
    );
    expect(planning.before).toEqual([]);
    expect(planning.downloads).toEqual([
      "main.py downloads data while it runs (line 7: urlretrieve('https://example.org/x.csv', 'x.csv'); from https://example.org/x.csv), but the run has no network, so that fails there: move the download into a prepare script (prepare.py), or upload the data with the code.",
    ]);
  });

  it('no download: nothing changes', () => {
    const { planning } = runRules(
      { request: 'train it', facts: { entryPoints: [entry('main.py')] }, reads: { 'main.py': 'print(1)\n' } },
      dataDownloads,
    );
    expect(planning.before).toEqual([]);
    expect(planning.downloads).toEqual([]);
  });
});
