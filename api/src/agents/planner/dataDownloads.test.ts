/**
 * Static recognition of data downloads (issue 38 item 3): python/downloads.py through
 * readPythonFacts, and the pattern fallback (downloadsByPattern) for files no Python parsed.
 * Shapes that download, and shapes that must not be flagged (URLs in comments, docstrings and
 * help texts; download=False; load_dataset on local files; a file: URL).
 */
import { describe, expect, it } from 'vitest';
import { analyzeProject, downloadsByPattern } from './analyzeProject.js';
import { readPythonFacts } from './readPythonFacts.js';

const DOWNLOADERS: Record<string, string> = {
  // nanoGPT's data/shakespeare_char/prepare.py, shortened
  'data/shakespeare_char/prepare.py': [
    'import os, pickle, requests',
    'import numpy as np',
    "input_file_path = os.path.join(os.path.dirname(__file__), 'input.txt')",
    'if not os.path.exists(input_file_path):',
    "    data_url = 'https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt'",
    "    with open(input_file_path, 'w') as f:",
    '        f.write(requests.get(data_url).text)',
  ].join('\n'),
  'urllib_fetch.py': [
    'from urllib.request import urlretrieve',
    'BASE = "http://127.0.0.1:8000/corpus/"',
    'urlretrieve(BASE + "train.csv", "train.csv")',
  ].join('\n'),
  // pytorch/examples mnist/main.py's data loading
  'mnist/main.py': [
    'import torch',
    'from torchvision import datasets, transforms',
    'def main():',
    '    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])',
    "    dataset1 = datasets.MNIST('../data', train=True, download=True, transform=transform)",
    "    dataset2 = datasets.MNIST('../data', train=False, transform=transform)",
    "if __name__ == '__main__':",
    '    main()',
  ].join('\n'),
  'hf.py': ['from datasets import load_dataset', 'ds = load_dataset("tiny_shakespeare")'].join('\n'),
  'hub.py': ['from huggingface_hub import hf_hub_download', 'p = hf_hub_download(repo_id="gpt2", filename="config.json")'].join('\n'),
  'shell.py': ['import subprocess', 'subprocess.run(["wget", "-q", "https://example.org/data.tar.gz"], check=True)'].join('\n'),
  'system.py': ['import os', 'os.system("curl -L -o data.zip https://example.org/data.zip")'].join('\n'),
  'frame.py': ['import pandas as pd', 'df = pd.read_csv("https://example.org/iris.csv")'].join('\n'),
};

const NOT_DOWNLOADERS: Record<string, string> = {
  'docs_only.py': [
    '"""Trains on the corpus from https://example.org/corpus (download it yourself)."""',
    'import argparse',
    '# mirror: https://mirror.example.org/corpus.txt',
    'p = argparse.ArgumentParser(description="see https://example.org/help")',
    'p.add_argument("--data", default="data/corpus.txt", help="a copy of https://example.org/corpus.txt")',
    'args = p.parse_args()',
    'print(open(args.data).read()[:10])',
  ].join('\n'),
  'no_download.py': [
    'from torchvision import datasets',
    "train = datasets.MNIST('data', train=True, download=False)",
    'test = datasets.FakeData(size=10)',
  ].join('\n'),
  'local_dataset.py': ['from datasets import load_dataset', 'ds = load_dataset("csv", data_files="train.csv")'].join('\n'),
  'file_url.py': ['from urllib.request import urlopen', 'print(urlopen("file:///etc/hostname").read())'].join('\n'),
  'parse_only.py': ['from urllib.parse import urlparse', 'print(urlparse("https://example.org/a").netloc)'].join('\n'),
};

const all = new Map(Object.entries({ ...DOWNLOADERS, ...NOT_DOWNLOADERS }));

describe('data downloads, read with the parser', () => {
  it('recognises each downloading shape with its kind and URLs, and flags none of the others', async () => {
    const parsed = await readPythonFacts(all);
    expect(parsed).not.toBeNull();
    const facts = analyzeProject(all, parsed!);
    const by = Object.fromEntries((facts.downloads ?? []).map((d) => [d.script, d]));
    expect(Object.keys(by).sort()).toEqual(Object.keys(DOWNLOADERS).sort());
    expect(by['data/shakespeare_char/prepare.py']).toMatchObject({
      calls: [{ kind: 'requests', line: 7 }],
      urls: ['https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt'],
    });
    expect(by['urllib_fetch.py']).toMatchObject({ calls: [{ kind: 'urllib' }], urls: ['http://127.0.0.1:8000/corpus/'] });
    // Only the call with download=True; replayable on its own (the transform left out), its root named.
    expect(by['mnist/main.py']!.calls).toEqual([
      {
        line: 5,
        kind: 'torchvision',
        call: "datasets.MNIST('../data', train=True, download=True, transform=transform)",
        replay: "import torchvision; torchvision.datasets.MNIST('../data', train=True, download=True)",
        root: '../data',
      },
    ]);
    expect(by['hf.py']!.calls[0]!.kind).toBe('datasets');
    expect(by['hub.py']!.calls[0]!.kind).toBe('huggingface_hub');
    expect(by['shell.py']).toMatchObject({ calls: [{ kind: 'wget' }], urls: ['https://example.org/data.tar.gz'] });
    expect(by['system.py']).toMatchObject({ calls: [{ kind: 'curl' }], urls: ['https://example.org/data.zip'] });
    expect(by['frame.py']).toMatchObject({ calls: [{ kind: 'pandas' }], urls: ['https://example.org/iris.csv'] });
    // The project's notes say which scripts download, and that they run as their own step.
    expect(facts.notes.find((n) => n.startsWith('data/shakespeare_char/prepare.py downloads data'))).toContain(
      'https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt',
    );
  });

  it('a download call whose arguments are not literals is recognised but not replayed', async () => {
    const files = new Map([
      ['train.py', ['import torchvision', 'import sys', 'ds = torchvision.datasets.CIFAR10(root=sys.argv[1], download=True)'].join('\n')],
    ]);
    const facts = analyzeProject(files, (await readPythonFacts(files))!);
    expect(facts.downloads).toEqual([
      {
        script: 'train.py',
        calls: [
          { line: 3, kind: 'torchvision', call: 'torchvision.datasets.CIFAR10(root=sys.argv[1], download=True)', replay: null, root: null },
        ],
        urls: [],
      },
    ]);
  });
});

describe('data downloads by pattern (no parser)', () => {
  it('finds the same calls in files given without parsed facts', () => {
    const facts = analyzeProject(new Map(Object.entries(DOWNLOADERS)));
    expect((facts.downloads ?? []).map((d) => d.script).sort()).toEqual(Object.keys(DOWNLOADERS).sort());
    expect(facts.downloads!.find((d) => d.script === 'data/shakespeare_char/prepare.py')!.urls).toEqual([
      'https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt',
    ]);
  });

  it('leaves out comments, docstrings, download=False and local datasets', () => {
    for (const [name, text] of Object.entries(NOT_DOWNLOADERS).filter(([n]) => n !== 'file_url.py' && n !== 'docs_only.py'))
      expect(downloadsByPattern(text), name).toBeNull();
    // Cruder than the parser: the docstring and the comment are left out, so it has no call to report.
    expect(downloadsByPattern(NOT_DOWNLOADERS['docs_only.py']!)).toBeNull();
  });
});
