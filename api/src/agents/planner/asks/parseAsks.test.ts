/**
 * The asks parser on requests as users write them (the requests of the planner's issue among
 * them): each request with the exact asks it makes, in order. The helpers below build the
 * expected asks; ids are checked apart (a1, a2, … in order).
 */
import { describe, expect, it } from 'vitest';
import type { Ask, OutputWanted } from '../contract.js';
import { parseAsks } from './parseAsks.js';

type Expected = Omit<Ask, 'id'>;
const set = (text: string, phrase: string, value?: string): Expected => ({
  kind: 'setting',
  text,
  phrase,
  ...(value !== undefined ? { value } : {}),
});
const sweep = (text: string, phrase?: string, values?: string[]): Expected => ({
  kind: 'sweep',
  text,
  ...(phrase ? { phrase } : {}),
  ...(values ? { values } : {}),
});
const out = (text: string, output: OutputWanted, extra: Partial<Ask> = {}): Expected => ({ kind: 'output', text, output, ...extra });
const hw = (text: string, hardware: string): Expected => ({ kind: 'hardware', text, hardware });
const scale = (text: string, workers: number | 'all', hardware?: string): Expected => ({
  kind: 'scale',
  text,
  workers,
  ...(hardware ? { hardware } : {}),
});
const thr = (text: string, metric: string, op: Ask['op'], threshold: number): Expected => ({
  kind: 'threshold',
  text,
  metric,
  op,
  threshold,
});
const limit = (text: string, cap: { maxCost?: number; maxSeconds?: number }): Expected => ({ kind: 'limit', text, ...cap });
const target = (text: string, file: string): Expected => ({ kind: 'target', text, target: file });
const setup = (text: string, phrase: string, file?: string): Expected => ({
  kind: 'setup',
  text,
  phrase,
  ...(file ? { target: file } : {}),
});
const other = (text: string, extra: Partial<Ask>): Expected => ({ kind: 'other', text, ...extra });

const strip = (asks: Ask[]): Expected[] => asks.map(({ id: _id, ...rest }) => rest);

const TABLE: [string, Expected[]][] = [
  [
    'train it for 200 iterations with a tiny model (n_embd 64, 2 layers, 4 heads) and give me the samples',
    [
      set('200 iterations', 'iterations', '200'),
      set('n_embd 64', 'n_embd', '64'),
      set('2 layers', 'layers', '2'),
      set('4 heads', 'heads', '4'),
      out('the samples', 'samples'),
    ],
  ],
  ['give me the report and the figures', [out('the report', 'report'), out('the figures', 'figures')]],
  [
    'Run a parameter sweep of dt = 0.1*dx*dx at six values across all available workers.',
    [sweep('parameter sweep of dt = 0.1*dx*dx at six values', 'dt'), scale('across all available workers', 'all')],
  ],
  [
    "Run a parameter sweep across all available workers: each of the first argument values 10, 20, 40, 80, 160, and give me each run's output.",
    [
      scale('across all available workers', 'all'),
      sweep('first argument values 10, 20, 40, 80, 160', 'first argument', ['10', '20', '40', '80', '160']),
      out("each run's output", 'stdout'),
    ],
  ],
  [
    'Train for 1 epoch with --emsize 64 --nhid 64 --nlayers 2 and give me the generated text',
    [
      set('1 epoch', 'epoch', '1'),
      set('--emsize 64', '--emsize', '64'),
      set('--nhid 64', '--nhid', '64'),
      set('--nlayers 2', '--nlayers', '2'),
      out('the generated text', 'samples'),
    ],
  ],
  [
    'run config/train_shakespeare_char.py with block size 32, lr 3e-4 and dropout 0 on CPU',
    [
      target('run config/train_shakespeare_char.py', 'config/train_shakespeare_char.py'),
      set('block size 32', 'block size', '32'),
      set('lr 3e-4', 'lr', '3e-4'),
      set('dropout 0', 'dropout', '0'),
      hw('on CPU', 'cpu'),
    ],
  ],
  ['Initialise the database first, then serve the app.', [setup('Initialise the database first', 'database')]],
  [
    'please run main.py --epochs=3 batch_size=16 with 4 heads, seed 42, and use the adam optimizer',
    [
      target('run main.py', 'main.py'),
      set('--epochs=3', '--epochs', '3'),
      set('batch_size=16', 'batch_size', '16'),
      set('4 heads', 'heads', '4'),
      set('seed 42', 'seed', '42'),
      set('adam optimizer', 'optimizer', 'adam'),
    ],
  ],
  ['sweep dt over 0.1, 0.05 and 0.01', [sweep('sweep dt over 0.1, 0.05 and 0.01', 'dt', ['0.1', '0.05', '0.01'])]],
  [
    "run it for seeds 1 2 3 and return each run's output",
    [sweep('seeds 1 2 3', 'seeds', ['1', '2', '3']), out("each run's output", 'stdout')],
  ],
  [
    'try learning rates 1e-3, 3e-4, 1e-4 on 4 workers in parallel',
    [
      sweep('learning rates 1e-3, 3e-4, 1e-4', 'learning rates', ['1e-3', '3e-4', '1e-4']),
      scale('on 4 workers', 4),
      scale('in parallel', 'all'),
    ],
  ],
  ['run the script for n from 1 to 5', [sweep('n from 1 to 5', 'n', ['1', '2', '3', '4', '5'])]],
  [
    'learning rate of 0.001, a single epoch, 10k iterations',
    [
      set('learning rate of 0.001', 'learning rate', '0.001'),
      set('a single epoch', 'epoch', '1'),
      set('10k iterations', 'iterations', '10000'),
    ],
  ],
  [
    'train for 1,000 steps with 1_000 samples and two layers',
    [set('1,000 steps', 'steps', '1000'), set('1_000 samples', 'samples', '1000'), set('two layers', 'layers', '2')],
  ],
  [
    'get the accuracy above 0.9 under $2 within 30 minutes on an NVIDIA GPU',
    [
      thr('the accuracy above 0.9', 'accuracy', '>', 0.9),
      limit('under $2', { maxCost: 2 }),
      limit('within 30 minutes', { maxSeconds: 1800 }),
      hw('on an NVIDIA GPU', 'nvidia'),
    ],
  ],
  [
    'Stop when the loss is below 0.5, run on AMD, and save results.csv',
    [thr('the loss is below 0.5', 'loss', '<', 0.5), hw('on AMD', 'amd'), out('results.csv', 'file', { file: 'results.csv' })],
  ],
  [
    'using the shakespeare_char config, report the final loss',
    [target('using the shakespeare_char config', 'shakespeare_char'), out('the final loss', 'metrics', { metric: 'loss' })],
  ],
  ['Train the model for 3 epochs and save the model weights.', [set('3 epochs', 'epochs', '3'), out('the model weights', 'model')]],
  [
    'Train a character-level model on the included text for 500 steps with batch size 32 and show me some generated samples',
    [set('500 steps', 'steps', '500'), set('batch size 32', 'batch size', '32'), out('some generated samples', 'samples')],
  ],
  [
    'Fine-tune gpt2 on my data with lr=5e-5 for 3 epochs, save the checkpoint',
    [set('lr=5e-5', 'lr', '5e-5'), set('3 epochs', 'epochs', '3'), out('the checkpoint', 'model')],
  ],
  ['Can you run the sklearn example and give me the report and the figures?', [out('the report', 'report'), out('the figures', 'figures')]],
  [
    'I want the model trained with a learning rate of 0.01 and a batch size of 128',
    [out('the model', 'model'), set('learning rate of 0.01', 'learning rate', '0.01'), set('batch size of 128', 'batch size', '128')],
  ],
  [
    'Please run train.py with --seeds 1 2 3 on all workers',
    [target('run train.py', 'train.py'), sweep('--seeds 1 2 3', '--seeds', ['1', '2', '3']), scale('on all workers', 'all')],
  ],
  ['train on cpu for 10 minutes max', [hw('on cpu', 'cpu'), limit('for 10 minutes', { maxSeconds: 600 })]],
  ['Train a small model quickly', [other('a small model', { phrase: 'small model' })]],
  [
    'compare batch sizes 32 and 64 and plot the loss curves',
    [sweep('batch sizes 32 and 64', 'batch sizes', ['32', '64']), out('plot the loss curves', 'figures')],
  ],
  [
    'Evaluate every 100 steps and log every 10 iterations',
    [set('Evaluate every 100 steps', 'eval interval', '100'), set('log every 10 iterations', 'log interval', '10')],
  ],
  [
    'no dropout, weight decay 0.1, warmup 100 steps, temperature 0.8, top_k 200',
    [
      set('no dropout', 'dropout', '0'),
      set('weight decay 0.1', 'weight decay', '0.1'),
      set('warmup 100 steps', 'warmup', '100'),
      set('temperature 0.8', 'temperature', '0.8'),
      set('top_k 200', 'top_k', '200'),
    ],
  ],
  [
    'Use 8 dataloader workers and a context length of 256',
    [set('8 dataloader workers', 'dataloader workers', '8'), set('context length of 256', 'context length', '256')],
  ],
  ['run with device=cuda compile=False', [set('device=cuda', 'device', 'cuda'), set('compile=False', 'compile', 'False')]],
  [
    'turn off compile and use mixed precision',
    [set('turn off compile', 'compile', 'False'), set('use mixed precision', 'mixed precision', 'True')],
  ],
  [
    'python train.py config/train_shakespeare_char.py --device=cpu --compile=False --max_iters=2000 --n_layer=4 --dropout=0.0',
    [
      target('python train.py', 'train.py'),
      target('config/train_shakespeare_char.py', 'config/train_shakespeare_char.py'),
      set('--device=cpu', '--device', 'cpu'),
      set('--compile=False', '--compile', 'False'),
      set('--max_iters=2000', '--max_iters', '2000'),
      set('--n_layer=4', '--n_layer', '4'),
      set('--dropout=0.0', '--dropout', '0.0'),
    ],
  ],
  [
    'Sweep the learning rate over 1e-4, 3e-4 and 1e-3 with 3 seeds each and report accuracy for every run',
    [
      sweep('Sweep the learning rate over 1e-4, 3e-4 and 1e-3', 'learning rate', ['1e-4', '3e-4', '1e-3']),
      sweep('3 seeds', 'seeds'),
      out('accuracy', 'metrics', { metric: 'accuracy' }),
    ],
  ],
  ['grid search over lr in {0.1, 0.01, 0.001}', [sweep('grid search over lr in {0.1, 0.01, 0.001}', 'lr', ['0.1', '0.01', '0.001'])]],
  [
    "train until the validation loss is below 1.5, but don't spend more than $5",
    [thr('until the validation loss is below 1.5', 'validation loss', '<', 1.5), limit('spend more than $5', { maxCost: 5 })],
  ],
  ['reach 95% accuracy on MNIST using an Apple M2', [thr('reach 95% accuracy', 'accuracy', '>=', 0.95), hw('using an Apple M2', 'apple')]],
  ['Run 5 random seeds and give me the results', [sweep('5 random seeds', 'seeds'), out('the results', 'data')]],
  [
    "I'd like the final checkpoint plus loss.png and metrics.json",
    [
      out('the final checkpoint', 'model'),
      out('loss.png', 'file', { file: 'loss.png' }),
      out('metrics.json', 'file', { file: 'metrics.json' }),
    ],
  ],
  ['Download the dataset first, then train for 2 epochs', [setup('Download the dataset first', 'dataset'), set('2 epochs', 'epochs', '2')]],
  ['Before training, run prepare.py', [setup('Before training, run prepare.py', 'prepare.py', 'prepare.py')]],
  ['set alpha to 0.3 and beta = 0.7', [set('set alpha to 0.3', 'alpha', '0.3'), set('beta = 0.7', 'beta', '0.7')]],
  [
    'train with 4 transformer layers, 8 attention heads and a 512-dim embedding',
    [
      set('4 transformer layers', 'transformer layers', '4'),
      set('8 attention heads', 'attention heads', '8'),
      set('512-dim embedding', 'dim embedding', '512'),
    ],
  ],
  ['use sgd with momentum 0.9', [set('sgd', 'optimizer', 'sgd'), set('momentum 0.9', 'momentum', '0.9')]],
  ['epochs: 5, lr: 0.1, bs: 64', [set('epochs: 5', 'epochs', '5'), set('lr: 0.1', 'lr', '0.1'), set('bs: 64', 'bs', '64')]],
  ['Run the simulation with N=100, dt=0.01', [set('N=100', 'N', '100'), set('dt=0.01', 'dt', '0.01')]],
  [
    'Generate 5 samples of 200 tokens at temperature 0.7',
    [set('Generate 5 samples', 'samples', '5'), set('200 tokens', 'tokens', '200'), set('temperature 0.7', 'temperature', '0.7')],
  ],
  [
    'get an accuracy of at least 90% and keep loss < 0.5',
    [thr('an accuracy of at least 90%', 'accuracy', '>=', 0.9), thr('loss < 0.5', 'loss', '<', 0.5)],
  ],
  ['send me the trained weights and save the plots', [out('the trained weights', 'model'), out('the plots', 'figures')]],
  [
    'I need the output of each run and the final accuracy',
    [out('the output of each run', 'stdout'), out('the final accuracy', 'metrics', { metric: 'accuracy' })],
  ],
  ['cpu-only please, in under an hour', [hw('cpu-only', 'cpu'), limit('in under an hour', { maxSeconds: 3600 })]],
  [
    'train on data.csv and write predictions to preds.csv',
    [other('data.csv', { file: 'data.csv' }), out('preds.csv', 'file', { file: 'preds.csv' })],
  ],
  ['change the learning rate from 1e-3 to 1e-4', [set('learning rate from 1e-3 to 1e-4', 'learning rate', '1e-4')]],
  ['seeds 0-4', [sweep('seeds 0-4', 'seeds', ['0', '1', '2', '3', '4'])]],
  [
    'n_layer in [2, 4, 6] on every available machine',
    [sweep('n_layer in [2, 4, 6]', 'n_layer', ['2', '4', '6']), scale('on every available machine', 'all')],
  ],
  ['batch_size=16, 32, 64', [sweep('batch_size=16, 32, 64', 'batch_size', ['16', '32', '64'])]],
  ['lr 0.1 and 2 layers', [set('lr 0.1', 'lr', '0.1'), set('2 layers', 'layers', '2')]],
  ['Initialize the DB, then start the server on port 5000', [setup('Initialize the DB', 'DB'), set('port 5000', 'port', '5000')]],
  [
    'run the benchmark with --size 1024 --iterations 10 on an H100',
    [set('--size 1024', '--size', '1024'), set('--iterations 10', '--iterations', '10'), hw('on an H100', 'nvidia')],
  ],
  ['dropout of 10% with the train script', [set('dropout of 10%', 'dropout', '0.1'), target('with the train script', 'train')]],
  [
    'Run the flask app. The README says to run `flask --app flaskr init-db` before starting it',
    [set('--app flaskr', '--app', 'flaskr'), setup('init-db', 'init-db')],
  ],
  [
    'Run the sweep script with the seeds 1, 2 and 3 and keep the stdout',
    [target('Run the sweep script', 'sweep'), sweep('seeds 1, 2 and 3', 'seeds', ['1', '2', '3']), out('the stdout', 'stdout')],
  ],
  [
    'Please train the GPT for 5k iters on the shakespeare_char dataset, with n_layer=6, n_head=6, n_embd=384 and block_size 256, and give me samples',
    [
      set('5k iters', 'iters', '5000'),
      set('shakespeare_char dataset', 'dataset', 'shakespeare_char'),
      set('n_layer=6', 'n_layer', '6'),
      set('n_head=6', 'n_head', '6'),
      set('n_embd=384', 'n_embd', '384'),
      set('block_size 256', 'block_size', '256'),
      out('samples', 'samples'),
    ],
  ],
  [
    'run sweep.py for lr 0.01 and 0.001 on 2 machines',
    [target('run sweep.py', 'sweep.py'), sweep('lr 0.01 and 0.001', 'lr', ['0.01', '0.001']), scale('on 2 machines', 2)],
  ],
  [
    "python main.py --device cuda:0 --data ./data/wikitext-2 --model 'LSTM' --cuda --dry-run",
    [
      target('python main.py', 'main.py'),
      set('--device cuda:0', '--device', 'cuda:0'),
      set('--data ./data/wikitext-2', '--data', './data/wikitext-2'),
      set("--model 'LSTM'", '--model', 'LSTM'),
      set('--cuda', '--cuda'),
      set('--dry-run', '--dry-run'),
    ],
  ],
  [
    'set DATA_DIR=/tmp/x and wandb_log=yes, then --cuda dropout 0.1',
    [
      set('DATA_DIR=/tmp/x', 'DATA_DIR', '/tmp/x'),
      set('wandb_log=yes', 'wandb_log', 'yes'),
      set('--cuda', '--cuda'),
      set('dropout 0.1', 'dropout', '0.1'),
    ],
  ],
  [
    'Use the adam optimizer, with a learning rate sweep over 1e-3 and 1e-4, and give me the model checkpoint',
    [
      set('adam optimizer', 'optimizer', 'adam'),
      sweep('learning rate sweep over 1e-3 and 1e-4', 'learning rate', ['1e-3', '1e-4']),
      out('the model checkpoint', 'model'),
    ],
  ],
  [
    'Can you run this with 3 seeds across the cluster and email me a summary?',
    [sweep('3 seeds', 'seeds'), scale('across the cluster', 'all'), out('a summary', 'report')],
  ],
  [
    'train for 30 epochs, evaluating every 5 epochs, and keep the best model',
    [set('30 epochs', 'epochs', '30'), set('evaluating every 5 epochs', 'eval interval', '5'), out('the best model', 'model')],
  ],
  [
    'Train MNIST for 2 epochs with batch size 64 and test batch size 1000, then save the model',
    [
      set('2 epochs', 'epochs', '2'),
      set('batch size 64', 'batch size', '64'),
      set('test batch size 1000', 'test batch size', '1000'),
      out('the model', 'model'),
    ],
  ],
  [
    'Fine-tune bert-base-uncased on SST-2 for 1 epoch with a max sequence length of 128',
    [set('1 epoch', 'epoch', '1'), set('max sequence length of 128', 'max sequence length', '128')],
  ],
  [
    'Train the VAE with latent dim 2 for 10 epochs and give me the reconstructions and the loss plot',
    [
      set('latent dim 2', 'latent dim', '2'),
      set('10 epochs', 'epochs', '10'),
      out('the reconstructions', 'data'),
      out('the loss plot', 'figures'),
    ],
  ],
  [
    'Can you run the benchmark script 5 times and report the mean and std of the throughput?',
    [
      target('run the benchmark script', 'benchmark'),
      // How many times: a project with a count or repeat setting takes it; the planner decides.
      set('5 times', 'times', '5'),
      out('the mean', 'metrics', { metric: 'mean' }),
      out('the throughput', 'metrics', { metric: 'throughput' }),
    ],
  ],
  ['Serve the Flask app and initialize the database before it starts', [setup('initialize the database before it starts', 'database')]],
  ['Start the FastAPI server on port 8000 with 4 workers', [set('port 8000', 'port', '8000'), scale('with 4 workers', 4)]],
  [
    'Train a tiny GPT: 2 layers, 2 heads, 64-dim, block size 64, 500 iters. Sample 3 outputs at the end.',
    [
      set('2 layers', 'layers', '2'),
      set('2 heads', 'heads', '2'),
      set('64-dim', 'dim', '64'),
      set('block size 64', 'block size', '64'),
      set('500 iters', 'iters', '500'),
      set('Sample 3 outputs', 'samples', '3'),
    ],
  ],
  [
    "train the model on the GPU for 3 epochs and keep the weights; I don't need plots",
    [hw('on the GPU', 'gpu'), set('3 epochs', 'epochs', '3'), out('the weights', 'model')],
  ],
  [
    'run main.py 10 20 40',
    [
      target('run main.py', 'main.py'),
      set('10', 'first argument', '10'),
      set('20', 'second argument', '20'),
      set('40', 'third argument', '40'),
    ],
  ],
  ['Please train this for a maximum of 2 hours', [limit('for a maximum of 2 hours', { maxSeconds: 7200 })]],
  [
    'The learning rate should be 0.0003 and the weight decay 0.01',
    [set('learning rate should be 0.0003', 'learning rate', '0.0003'), set('weight decay 0.01', 'weight decay', '0.01')],
  ],
  [
    'Set max_iters to 100 and eval_interval to 20',
    [set('max_iters to 100', 'max_iters', '100'), set('eval_interval to 20', 'eval_interval', '20')],
  ],
  ["Hi! Could you please train the model in this repo? I'd like to see how well it does.", []],
  ['Follow step 3 of the README and report top-5 accuracy', [out('accuracy', 'metrics', { metric: 'accuracy' })]],
  ['I have 2 GPUs but want it on 1', []],
  [
    'Try it with different seeds and a few learning rates',
    [sweep('different seeds', 'seeds'), sweep('a few learning rates', 'learning rates')],
  ],
  ['Please use float16 and batch size 256 per GPU', [set('float16', 'dtype', 'float16'), set('batch size 256', 'batch size', '256')]],
  ['set n to 10, m to 20', [set('set n to 10', 'n', '10'), set('m to 20', 'm', '20')]],
  [
    'Train with layers=2, heads=4 and emb=128',
    [set('layers=2', 'layers', '2'), set('heads=4', 'heads', '4'), set('emb=128', 'emb', '128')],
  ],
  ['Train ResNet-50 on CIFAR-10 with python 3.11', []],
  ['Fix the bug in line 42 and run it', []],
  [
    'train it for 200 iterations with a tiny model (n_embd 64, 2 layers …)',
    [set('200 iterations', 'iterations', '200'), set('n_embd 64', 'n_embd', '64'), set('2 layers', 'layers', '2')],
  ],
  ['a parameter sweep across all available workers', [sweep('parameter sweep', undefined), scale('across all available workers', 'all')]],
  ['word_language_model with "1 epoch, --emsize 64 …"', [set('1 epoch', 'epoch', '1'), set('--emsize 64', '--emsize', '64')]],
  [
    'Train on Shakespeare with config/train_shakespeare_char.py for 100 iterations and show me a sample',
    [
      target('with config/train_shakespeare_char.py', 'config/train_shakespeare_char.py'),
      set('100 iterations', 'iterations', '100'),
      out('a sample', 'samples'),
    ],
  ],
  [
    'Run the n-body simulation with the number of particles set to 500, no wait, the number of particles should be 1000',
    [
      set('number of particles set to 500', 'number of particles', '500'),
      set('number of particles should be 1000', 'number of particles', '1000'),
    ],
  ],
  [
    'with the learning rate set to 3e-4 and the number of walkers equal to 64',
    [set('learning rate set to 3e-4', 'learning rate', '3e-4'), set('number of walkers equal to 64', 'number of walkers', '64')],
  ],
  // The corpus of public projects (api/test/fixtures/corpus/corpus.json), each request as its user wrote it.
  [
    'Train the word-level language model with main.py for 1 epoch, --emsize 64, --nhid 64, 1 layer and bptt 20, on CPU. Save the model as lm-small.pt and tell me the test perplexity.',
    [
      target('with main.py', 'main.py'),
      set('1 epoch', 'epoch', '1'),
      set('--emsize 64', '--emsize', '64'),
      set('--nhid 64', '--nhid', '64'),
      set('1 layer', 'layer', '1'),
      set('bptt 20', 'bptt', '20'),
      hw('on CPU', 'cpu'),
      out('the model as lm-small.pt', 'model', { file: 'lm-small.pt' }),
      out('the test perplexity', 'metrics', { metric: 'test perplexity' }),
    ],
  ],
  [
    'Generate shorter sine waves first: 100 points each (L = 100) and 20 waves (N = 20). Then train for 1 step and give me the prediction plot.',
    [
      setup('Generate shorter sine waves first', 'shorter sine waves'),
      set('L = 100', 'L', '100'),
      set('N = 20', 'N', '20'),
      set('1 step', 'step', '1'),
      out('the prediction plot', 'figures'),
    ],
  ],
  [
    'Fit a cubic instead of the quartic: set POLY_DEGREE to 3, and show me the learned function next to the actual one.',
    [set('POLY_DEGREE to 3', 'POLY_DEGREE', '3'), out('the learned function', 'stdout')],
  ],
  [
    'Run nanoGPT with config/train_shakespeare_char.py on CPU without torch.compile: 30 iterations, n_layer 2, n_head 2, n_embd 64, block size 64, batch size 12, evaluating every 10 iterations on 5 batches, and keep the checkpoint.',
    [
      target('with config/train_shakespeare_char.py', 'config/train_shakespeare_char.py'),
      hw('on CPU', 'cpu'),
      set('without torch.compile', 'torch.compile', 'False'),
      set('30 iterations', 'iterations', '30'),
      set('n_layer 2', 'n_layer', '2'),
      set('n_head 2', 'n_head', '2'),
      set('n_embd 64', 'n_embd', '64'),
      set('block size 64', 'block size', '64'),
      set('batch size 12', 'batch size', '12'),
      set('evaluating every 10 iterations', 'eval interval', '10'),
      set('on 5 batches', 'eval batches', '5'),
      out('the checkpoint', 'model'),
    ],
  ],
  [
    'Train gpt.py for 200 iterations with a tiny model: n_embd 64, 2 layers, 4 heads, block size 32 and batch size 32, evaluating every 100 iterations on 20 batches. Give me the generated sample.',
    [
      target('gpt.py', 'gpt.py'),
      set('200 iterations', 'iterations', '200'),
      set('n_embd 64', 'n_embd', '64'),
      set('2 layers', 'layers', '2'),
      set('4 heads', 'heads', '4'),
      set('block size 32', 'block size', '32'),
      set('batch size 32', 'batch size', '32'),
      set('evaluating every 100 iterations', 'eval interval', '100'),
      set('on 20 batches', 'eval batches', '20'),
      out('the generated sample', 'samples'),
    ],
  ],
  [
    'Train bigram.py with 4 attention heads and dropout 0.1.',
    [target('bigram.py', 'bigram.py'), set('4 attention heads', 'attention heads', '4'), set('dropout 0.1', 'dropout', '0.1')],
  ],
  [
    'Initialise the database the way the README says, then serve the Flaskr blog on port 5001.',
    [
      setup('Initialise the database', 'database'),
      other('serve the Flaskr blog', { phrase: 'Flaskr blog' }),
      set('port 5001', 'port', '5001'),
    ],
  ],
  [
    'Serve the JavaScript example app on 127.0.0.1 port 5002 and give me the address of its jQuery page.',
    [
      set('on 127.0.0.1', 'host', '127.0.0.1'),
      set('port 5002', 'port', '5002'),
      other('the address of its jQuery page', { phrase: 'address of its jQuery page' }),
    ],
  ],
  [
    'Classify the digits with gamma 0.0005 and a 30% test split, and give me the classification report and all the figures.',
    [
      set('gamma 0.0005', 'gamma', '0.0005'),
      set('30% test split', 'test split', '0.3'),
      out('the classification report', 'report'),
      out('all the figures', 'figures'),
    ],
  ],
  [
    'Train the iris decision trees with max_depth 3 and min_samples_leaf 5, and give me the decision-surface figure.',
    [
      set('max_depth 3', 'max_depth', '3'),
      set('min_samples_leaf 5', 'min_samples_leaf', '5'),
      out('the decision-surface figure', 'figures'),
    ],
  ],
  [
    'Run the k-means digits benchmark with n_init 10 and a mesh step h of 0.05, and give me the benchmark table and the figure.',
    [
      set('n_init 10', 'n_init', '10'),
      set('a mesh step h of 0.05', 'h', '0.05'),
      out('the benchmark table', 'report'),
      out('the figure', 'figures'),
    ],
  ],
  [
    'Set max_depth to 3 for both tree models, the decision tree and the random forest, and give me the comparison figure.',
    [set('max_depth to 3', 'max_depth', '3'), out('the comparison figure', 'figures')],
  ],
  [
    'Train the GCN for 50 epochs with 32 hidden units, learning rate 0.02 and dropout 0.3, without CUDA, and report the test accuracy.',
    [
      set('50 epochs', 'epochs', '50'),
      set('32 hidden units', 'hidden units', '32'),
      set('learning rate 0.02', 'learning rate', '0.02'),
      set('dropout 0.3', 'dropout', '0.3'),
      hw('without CUDA', 'cpu'),
      out('the test accuracy', 'metrics', { metric: 'test accuracy' }),
    ],
  ],
  [
    "Sweep the diffusion constant a over 0.1, 0.2, 0.3 and 0.4 across all available workers, 300 time steps each with an image every 100 steps, and give me each run's images.",
    [
      sweep('Sweep the diffusion constant a over 0.1, 0.2, 0.3 and 0.4', 'a', ['0.1', '0.2', '0.3', '0.4']),
      scale('across all available workers', 'all'),
      set('300 time steps', 'time steps', '300'),
      set('an image every 100 steps', 'image interval', '100'),
      out("each run's images", 'figures'),
    ],
  ],
  [
    'Run the hello command for the name Ada Lovelace, 3 times, and give me its output.',
    [set('name Ada Lovelace', 'name', 'Ada Lovelace'), set('3 times', 'times', '3'), out('its output', 'stdout')],
  ],
  [
    "Run it for IDs 1 to 5 with --age 30 and --score 99.5, one run per ID across all available workers, and give me each run's output.",
    [
      sweep('IDs 1 to 5', 'IDs', ['1', '2', '3', '4', '5']),
      set('--age 30', '--age', '30'),
      set('--score 99.5', '--score', '99.5'),
      scale('one run per ID across all available workers', 'all'),
      out("each run's output", 'stdout'),
    ],
  ],
  [
    'Sum the numbers 1.5, 2 and 3 and show me the result.',
    [{ ...set('the numbers 1.5, 2 and 3', 'numbers', '1.5 2 3'), values: ['1.5', '2', '3'] }, out('the result', 'stdout')],
  ],
  [
    "Process the users alice, bob and carol with --user, one run per user across all available workers, and give me each run's output.",
    [
      sweep('the users alice, bob and carol', '--user', ['alice', 'bob', 'carol']),
      scale('one run per user across all available workers', 'all'),
      out("each run's output", 'stdout'),
    ],
  ],
  [
    'Train chargpt for 100 iterations with the gpt-nano model, block size 64 and batch size 16, and give me the saved model and its config.',
    [
      set('100 iterations', 'iterations', '100'),
      set('the gpt-nano model', 'model type', 'gpt-nano'),
      set('block size 64', 'block size', '64'),
      set('batch size 16', 'batch size', '16'),
      out('the saved model', 'model'),
      out('its config', 'data'),
    ],
  ],
  [
    "Sweep the time step dt over 0.005, 0.01 and 0.02 with num_steps 2000, one run per value across all available workers, and give me each run's figure.",
    [
      sweep('Sweep the time step dt over 0.005, 0.01 and 0.02', 'dt', ['0.005', '0.01', '0.02']),
      set('num_steps 2000', 'num_steps', '2000'),
      scale('one run per value across all available workers', 'all'),
      out("each run's figure", 'figures'),
    ],
  ],
  [
    'Train the two-layer network with hidden size 200 for 1000 iterations at learning rate 5e-5, and give me the loss log.',
    [
      set('hidden size 200', 'hidden size', '200'),
      set('1000 iterations', 'iterations', '1000'),
      set('learning rate 5e-5', 'learning rate', '5e-5'),
      out('the loss log', 'logs'),
    ],
  ],
  [
    "Sweep learning_rate over 1e-6, 2e-6 and 5e-7 across all available workers with 200 iterations each, and give me each run's final loss.",
    [
      sweep('Sweep learning_rate over 1e-6, 2e-6 and 5e-7', 'learning_rate', ['1e-6', '2e-6', '5e-7']),
      scale('across all available workers', 'all'),
      set('200 iterations', 'iterations', '200'),
      out("each run's final loss", 'metrics', { metric: 'loss' }),
    ],
  ],
  [
    'Train the random forest with 100 trees, min_split 0.02 and training seed 7 in params.yaml, on the features in data/features, and give me model.pkl.',
    [
      { ...set('100 trees', 'trees', '100'), file: 'params.yaml' },
      { ...set('min_split 0.02', 'min_split', '0.02'), file: 'params.yaml' },
      { ...set('training seed 7 in params.yaml', 'training seed', '7'), file: 'params.yaml' },
      other('on the features in data/features', { file: 'data/features' }),
      out('model.pkl', 'file', { file: 'model.pkl' }),
    ],
  ],
];

describe('parseAsks: requests as users write them', () => {
  it('has a table of at least 40 requests', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
  });
  for (const [request, expected] of TABLE) {
    it(request, () => {
      const asks = parseAsks(request);
      expect(strip(asks)).toEqual(expected);
      // ids in order; each text is the user's own words, found in the request in order.
      expect(asks.map((a) => a.id)).toEqual(asks.map((_, k) => `a${k + 1}`));
      let from = 0;
      for (const a of asks) {
        const at = request.indexOf(a.text, from);
        expect(at, a.text).toBeGreaterThanOrEqual(0);
        from = at + a.text.length;
      }
    });
  }
});

describe('parseAsks: numbers as users write them', () => {
  const value = (request: string) => parseAsks(request).map((a) => a.value ?? a.values);
  it.each([
    ['lr 3e-4', '3e-4'],
    ['lr 1E-3', '1E-3'],
    ['1_000 iterations', '1000'],
    ['1,000 iterations', '1000'],
    ['1,000,000 steps', '1000000'],
    ['10k iterations', '10000'],
    ['2.5k steps', '2500'],
    ['1M steps', '1000000'],
    ['dropout 0.5', '0.5'],
    ['dropout .5', '0.5'],
    ['dropout 10%', '0.1'],
    ['two layers', '2'],
    ['twenty-four layers', '24'],
    ['a single epoch', '1'],
    ['one epoch', '1'],
    ['a hundred iterations', '100'],
    ['three hundred steps', '300'],
    ['seed -1', '-1'],
  ])('%s → %s', (request, expected) => {
    expect(value(request)).toEqual([expected]);
  });

  it('keeps a list of numbers with commas apart from thousands', () => {
    expect(value('seeds 1,2,3')).toEqual([['1', '2', '3']]);
    expect(value('batch sizes 100, 200, 300')).toEqual([['100', '200', '300']]);
    expect(value('iterations 1,000, 2,000 and 3,000')).toEqual([['1000', '2000', '3000']]);
  });

  it('expands a range, with a step, and leaves a range too long or not whole without values', () => {
    expect(value('seeds 1 to 4')).toEqual([['1', '2', '3', '4']]);
    expect(value('seeds 1..3')).toEqual([['1', '2', '3']]);
    expect(value('n_layer from 2 to 8 step 2')).toEqual([['2', '4', '6', '8']]);
    expect(value('seeds between 3 and 1')).toEqual([['3', '2', '1']]);
    expect(parseAsks('vary hidden units from 32 to 256')).toMatchObject([{ kind: 'sweep', phrase: 'hidden units' }]);
    expect(parseAsks('vary hidden units from 32 to 256')[0]!.values).toBeUndefined();
    expect(parseAsks('learning rate from 1e-4 to 1e-2')[0]).toMatchObject({ kind: 'sweep', phrase: 'learning rate' });
    expect(parseAsks('learning rate from 1e-4 to 1e-2')[0]!.values).toBeUndefined();
  });

  it('gives the number of a count sweep no values: the planner asks or derives them', () => {
    const [a] = parseAsks('sweep dt at 6 values');
    expect(a).toMatchObject({ kind: 'sweep', phrase: 'dt' });
    expect(a!.values).toBeUndefined();
    expect(parseAsks('six values of dt')).toMatchObject([{ kind: 'sweep', phrase: 'dt', text: 'six values of dt' }]);
  });

  it('reads thresholds in percent as fractions and money in cents as dollars', () => {
    expect(parseAsks('accuracy above 90%')).toMatchObject([{ kind: 'threshold', threshold: 0.9, op: '>' }]);
    expect(parseAsks('under 50 cents')).toMatchObject([{ kind: 'limit', maxCost: 0.5 }]);
    expect(parseAsks('within 1h30m')).toMatchObject([{ kind: 'limit', maxSeconds: 5400 }]);
    expect(parseAsks('in less than half an hour')).toMatchObject([{ kind: 'limit', maxSeconds: 1800 }]);
  });
});

describe('parseAsks: words that ask for nothing, and bad input', () => {
  it.each(['', '   ', '\n\n', 'please', 'give me', 'train it', 'please train it', 'thanks!', 'run the project', 'Train a model.'])(
    '%j gives no asks',
    (request) => {
      expect(parseAsks(request)).toEqual([]);
    },
  );

  it('gives no asks for a request of only punctuation', () => {
    expect(parseAsks('!!!???...;;;,,,---===***///\\\\""\'\'``()[]{}<>')).toEqual([]);
    expect(parseAsks('-- --- -=- .. ... =')).toEqual([]);
  });

  it('gives no asks for numbers without units', () => {
    expect(parseAsks('42')).toEqual([]);
    expect(parseAsks('1e3 0.5 7 10k 1,000')).toEqual([]);
    expect(parseAsks('3 4 5 and 6')).toEqual([]);
  });

  it('survives unicode: other scripts, emoji, combining marks, lone surrogates', () => {
    expect(parseAsks('hello 😀 world — 训练 3 个 epoch')).toEqual([]);
    expect(parseAsks('entraîne pendant 3 époques 🚀🚀')).toEqual([]);
    expect(parseAsks('e\u0301\u0301\u0301 \ud800 \udfff x')).toEqual([]);
    // The asks around them are still read, with their own words.
    expect(parseAsks('😀 train for 3 epochs 😀 on CPU 🚀')).toEqual([
      { id: 'a1', kind: 'setting', text: '3 epochs', phrase: 'epochs', value: '3' },
      { id: 'a2', kind: 'hardware', text: 'on CPU', hardware: 'cpu' },
    ]);
    expect(parseAsks('ＣＰＵ')).toEqual([]);
  });

  it('is not fooled by numbers glued to words or names with digits', () => {
    expect(parseAsks('fine-tune gpt2 on the h100')).toEqual([{ id: 'a1', kind: 'hardware', text: 'on the h100', hardware: 'nvidia' }]);
    expect(parseAsks('resnet50 layer4')).toEqual([]);
  });

  it('reads a 100 KB request to the end, linearly (a correctness check, not a timing)', () => {
    const chunk = 'train for 200 iterations with lr 3e-4 and give me the figures. ';
    const request = chunk.repeat(Math.ceil(100_000 / chunk.length));
    expect(request.length).toBeGreaterThanOrEqual(100_000);
    const asks = parseAsks(request);
    // The first of each kind of output is kept; every setting is read.
    expect(asks.filter((a) => a.kind === 'setting')).toHaveLength(2 * Math.ceil(100_000 / chunk.length));
    expect(asks.filter((a) => a.kind === 'output')).toHaveLength(1);
    expect(asks.at(-1)!.id).toBe(`a${asks.length}`);
  });

  it('reads 100 KB without spaces, of one long number list, or of one huge word', () => {
    expect(parseAsks('x'.repeat(100_000))).toEqual([]);
    expect(parseAsks('=-'.repeat(50_000))).toEqual([]);
    const list = parseAsks(`seeds ${Array.from({ length: 20_000 }, (_, k) => k).join(', ')}`);
    // More than 64 values: a sweep whose values the planner must ask for, not a truncated list.
    expect(list[0]).toMatchObject({ kind: 'sweep', phrase: 'seeds' });
    expect(list[0]!.values).toBeUndefined();
    expect(parseAsks('('.repeat(50_000) + 'lr 0.1' + ')'.repeat(50_000))).toMatchObject([{ kind: 'setting', phrase: 'lr', value: '0.1' }]);
  });

  it('never throws on any input type a caller might pass by mistake', () => {
    expect(parseAsks(undefined as unknown as string)).toEqual([]);
    expect(parseAsks(null as unknown as string)).toEqual([]);
    expect(parseAsks(42 as unknown as string)).toEqual([]);
  });
});

describe('parseAsks: outputs', () => {
  it('does not take the model a request trains for the model it wants back', () => {
    expect(parseAsks('train the model for 3 epochs')).toEqual([
      { id: 'a1', kind: 'setting', text: '3 epochs', phrase: 'epochs', value: '3' },
    ]);
    expect(parseAsks('resume from the checkpoint and train 2 epochs').map((a) => a.kind)).toEqual(['setting']);
    expect(parseAsks('with a tiny model (n_embd 64)').map((a) => a.text)).toEqual(['n_embd 64']);
  });

  it('keeps the first mention of each output', () => {
    expect(parseAsks('save the model, and give me the model').map((a) => a.text)).toEqual(['the model']);
  });

  it('does not take an output directory for stdout', () => {
    expect(parseAsks('give me the output directory')).toEqual([]);
  });

  it('names a file the run reads as other, not as an output', () => {
    expect(parseAsks('train on data.csv')).toEqual([{ id: 'a1', kind: 'other', text: 'data.csv', file: 'data.csv' }]);
  });

  it('drops a bare "parameter sweep" when the request says what to sweep', () => {
    expect(parseAsks('a parameter sweep across all available workers').map((a) => a.kind)).toEqual(['sweep', 'scale']);
    expect(parseAsks('a parameter sweep across all available workers of seeds 1 2 3').map((a) => a.kind)).toEqual(['scale', 'sweep']);
  });
});

describe('parseAsks: lists, sweeps and one run per item', () => {
  const brief = (request: string) => parseAsks(request).map(({ id: _id, text: _t, ...rest }) => rest);

  it('reads a list for one run as a setting with its items, and "one run per …" as a sweep of them', () => {
    expect(brief('Sum the numbers 1.5, 2 and 3')).toEqual([
      { kind: 'setting', phrase: 'numbers', value: '1.5 2 3', values: ['1.5', '2', '3'] },
    ]);
    expect(brief('Sum the numbers 1.5, 2 and 3, one run per number')).toEqual([
      { kind: 'sweep', phrase: 'numbers', values: ['1.5', '2', '3'] },
    ]);
    expect(brief('greet the users alice, bob and carol')).toEqual([
      { kind: 'setting', phrase: 'users', value: 'alice bob carol', values: ['alice', 'bob', 'carol'] },
    ]);
    expect(brief('greet the users alice and bob, a separate run for each value')).toEqual([
      { kind: 'sweep', phrase: 'users', values: ['alice', 'bob'] },
    ]);
  });

  it('sweeps a noun over a range, and leaves a lexicon list a sweep as before', () => {
    expect(brief('Run it for IDs 1 to 3')).toEqual([{ kind: 'sweep', phrase: 'IDs', values: ['1', '2', '3'] }]);
    expect(brief('seeds 1, 2 and 3')).toEqual([{ kind: 'sweep', phrase: 'seeds', values: ['1', '2', '3'] }]);
  });

  it('names the list by the bare flag the request gives for it, and keeps an unrelated switch', () => {
    expect(brief('Process the users alice and bob with --user, one run per user')).toEqual([
      { kind: 'sweep', phrase: '--user', values: ['alice', 'bob'] },
    ]);
    expect(brief('Process the users alice and bob with --verbose')).toEqual([
      { kind: 'setting', phrase: 'users', value: 'alice bob', values: ['alice', 'bob'] },
      { kind: 'setting', phrase: '--verbose', value: 'True' },
    ]);
  });

  it('does not read the count of runs as one more value of the list before it', () => {
    expect(brief('with --score 99.5, one run per ID')).toEqual([{ kind: 'setting', phrase: '--score', value: '99.5' }]);
    expect(brief('with num_steps 2000, one run per value')).toEqual([{ kind: 'setting', phrase: 'num_steps', value: '2000' }]);
  });

  it('takes no files and no function words for a list', () => {
    expect(brief("I'd like the final checkpoint plus loss.png and metrics.json").map((a) => a.kind)).toEqual([
      'output',
      'output',
      'output',
    ]);
    expect(brief('pass the files a.txt and b.txt').map((a) => a.kind)).toEqual(['other', 'other']);
  });

  it('joins "one run per X" to the scale that follows it, and adds no ask without one', () => {
    expect(parseAsks('one run per seed across all available workers').map((a) => [a.kind, a.text])).toEqual([
      ['scale', 'one run per seed across all available workers'],
    ]);
    expect(parseAsks('one run per seed')).toEqual([]);
  });
});

describe('parseAsks: names, symbols and places', () => {
  const brief = (request: string) => parseAsks(request).map(({ id: _id, ...rest }) => rest);

  it('reads a short symbol after the words that describe it as the setting', () => {
    expect(brief('a mesh step h of 0.05')).toEqual([{ kind: 'setting', text: 'a mesh step h of 0.05', phrase: 'h', value: '0.05' }]);
    expect(brief('the grid spacing dx = 0.01')).toEqual([
      { kind: 'setting', text: 'the grid spacing dx = 0.01', phrase: 'dx', value: '0.01' },
    ]);
    expect(brief('Sweep the time step dt over 0.1 and 0.2')).toEqual([
      { kind: 'sweep', text: 'Sweep the time step dt over 0.1 and 0.2', phrase: 'dt', values: ['0.1', '0.2'] },
    ]);
    // Words are not symbols: "to" and "a" before a number.
    expect(brief('set the learning rate to 3e-4')).toEqual([
      { kind: 'setting', text: 'learning rate to 3e-4', phrase: 'learning rate', value: '3e-4' },
    ]);
    expect(brief('with gamma 0.0005 and a 30% test split').map((a) => a.phrase)).toEqual(['gamma', 'test split']);
  });

  it('reads any named quantity "of" a value, but not a count or a group of something', () => {
    expect(brief('with a diffusion constant of 0.3')).toEqual([
      { kind: 'setting', text: 'a diffusion constant of 0.3', phrase: 'diffusion constant', value: '0.3' },
    ]);
    expect(brief('a mesh step size of 0.05').map((a) => [a.phrase, a.value])).toEqual([['mesh step size', '0.05']]);
    expect(brief('a total of 5 epochs').map((a) => [a.phrase, a.value])).toEqual([['epochs', '5']]);
    expect(brief('a couple of 2 runs')).toEqual([]);
    expect(brief('a budget of 5 dollars').map((a) => a.kind)).toEqual(['limit']);
  });

  it('reads a proper name as one value, and "N times" as a count', () => {
    expect(brief('greet the name Ada Lovelace, 3 times')).toEqual([
      { kind: 'setting', text: 'name Ada Lovelace', phrase: 'name', value: 'Ada Lovelace' },
      { kind: 'setting', text: '3 times', phrase: 'times', value: '3' },
    ]);
  });

  it('reads a model by its own name, never by a word that describes it', () => {
    expect(brief('with the gpt-nano model')).toEqual([
      { kind: 'setting', text: 'the gpt-nano model', phrase: 'model type', value: 'gpt-nano' },
    ]);
    expect(brief('use the resnet18 model').map((a) => a.value)).toEqual(['resnet18']);
    for (const r of [
      'train the word-level language model',
      'train a two-layer model',
      'train the trained model',
      'train the small model',
    ]) {
      expect(
        brief(r).filter((a) => a.kind === 'setting'),
        r,
      ).toEqual([]);
    }
  });

  it('reads a host address after a word that places it or before a port, never a version number', () => {
    expect(brief('serve it on 0.0.0.0 port 80').map((a) => [a.phrase, a.value])).toEqual([
      ['host', '0.0.0.0'],
      ['port', '80'],
    ]);
    expect(brief('bind localhost').map((a) => [a.phrase, a.value])).toEqual([['host', 'localhost']]);
    expect(brief('use version 1.2.3.4')).toEqual([]);
  });

  it('keeps the config file a setting lives in, for every setting listed with it', () => {
    expect(brief('with 100 trees and seed 7 in params.yaml').map((a) => [a.phrase, a.value, a.file])).toEqual([
      ['trees', '100', 'params.yaml'],
      ['seed', '7', 'params.yaml'],
    ]);
    expect(brief('seed 7 in params.yaml, then lr 0.1').map((a) => a.file)).toEqual(['params.yaml', undefined]);
  });

  it('names the app to serve only when the request gives it a name of its own', () => {
    expect(brief('serve the Flaskr blog')).toEqual([{ kind: 'other', text: 'serve the Flaskr blog', phrase: 'Flaskr blog' }]);
    expect(brief('Serve the Flask app')).toEqual([]);
    expect(brief('serve the app')).toEqual([]);
  });

  it('reads a folder the run reads as other, and the address of one page wanted back as other', () => {
    expect(brief('on the features in data/features')).toEqual([
      { kind: 'other', text: 'on the features in data/features', file: 'data/features' },
    ]);
    // The service itself is no ask of its own: every service plan gives its address.
    expect(brief('give me the URL')).toEqual([]);
    expect(brief('give me an endpoint')).toEqual([]);
    expect(brief('give me the address of its jQuery page')).toEqual([
      { kind: 'other', text: 'the address of its jQuery page', phrase: 'address of its jQuery page' },
    ]);
  });
});

describe('parseAsks: intervals and evaluation', () => {
  const brief = (request: string) => parseAsks(request).map((a) => [a.text, a.phrase, a.value]);

  it('names an interval by what is made that often, and the batches an evaluation averages over', () => {
    expect(brief('an image every 100 steps')).toEqual([['an image every 100 steps', 'image interval', '100']]);
    expect(brief('save a checkpoint every 500 iters')).toEqual([['a checkpoint every 500 iters', 'save interval', '500']]);
    expect(brief('evaluating every 10 iterations on 5 batches')).toEqual([
      ['evaluating every 10 iterations', 'eval interval', '10'],
      ['on 5 batches', 'eval batches', '5'],
    ]);
  });

  it('does not read batches without an evaluation as the eval batches', () => {
    expect(brief('train on 5 batches')).toEqual([]);
  });
});

describe('parseAsks: outputs by what they are', () => {
  const brief = (request: string) => parseAsks(request).map((a) => [a.text, a.output, a.file ?? a.metric]);

  it('keeps the name a model is saved under with the model', () => {
    expect(brief('Save the model as lm-small.pt')).toEqual([['the model as lm-small.pt', 'model', 'lm-small.pt']]);
  });

  it('reads a report, a table, a log, a figure and what a program prints by the noun that ends them', () => {
    expect(brief('give me the classification report')).toEqual([['the classification report', 'report', undefined]]);
    expect(brief('give me the benchmark table')).toEqual([['the benchmark table', 'report', undefined]]);
    expect(brief('give me the loss log')).toEqual([['the loss log', 'logs', undefined]]);
    expect(brief('give me the decision-surface figure')).toEqual([['the decision-surface figure', 'figures', undefined]]);
    expect(brief('show me the result')).toEqual([['the result', 'stdout', undefined]]);
    expect(brief('tell me the test perplexity')).toEqual([['the test perplexity', 'metrics', 'test perplexity']]);
    expect(brief("each run's final loss")).toEqual([["each run's final loss", 'metrics', 'loss']]);
    expect(brief("give me each run's images")).toEqual([["each run's images", 'figures', undefined]]);
  });

  it('does not take a thing the run trains on or a plural for what a program prints', () => {
    expect(brief('show me the figures')).toEqual([['the figures', 'figures', undefined]]);
    expect(brief('train the network')).toEqual([]);
  });
});
