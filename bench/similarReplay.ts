/**
 * Replays a history of preparation records in time order and asks, before each one, what
 * the similar-cases rule (api/src/domain/preparation/similar.ts, the same verdictOf the
 * preparation stage applies) would have said with only the records before it: a record the
 * rule would have skipped is a candidate run saved — unless that record was ACCEPTED, which
 * is an accepted change the rule would have missed. Prints both, per transformation.
 *
 *   node --import tsx bench/similarReplay.ts                         # a seeded synthetic history
 *   node --import tsx bench/similarReplay.ts --records 5000 --seed 7
 *   node --import tsx bench/similarReplay.ts --database-url postgres://…/chatgpu   # a real one
 *
 * The synthetic history: optional optimizations tried on programs of five families on CPU,
 * NVIDIA and AMD workers, each (transformation, family, accelerator) with its own fixed
 * acceptance rate (most near 0 or 1, as real ones are: bf16 autocast on hardware without bf16
 * units is always rejected; some near 0.5).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { verdictOf, type SimilarCases } from '../api/src/domain/preparation/similar.js';

interface Rec {
  transformation: string;
  modelFamily: string;
  accelerator: string;
  outcome: 'ACCEPTED' | 'REJECTED';
}

const { values } = parseArgs({
  options: { records: { type: 'string', default: '2000' }, seed: { type: 'string', default: '1' }, 'database-url': { type: 'string' } },
});

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => (s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

function synthetic(n: number, seed: number): Rec[] {
  const rand = rng(seed);
  const transformations = [
    'autocast-bf16',
    'autocast-fp16',
    'channels-last',
    'torch-compile',
    'dataloader-workers',
    'pin-memory',
    'matmul-precision-high',
    'cudnn-benchmark',
  ];
  const families = ['convnet', 'transformer', 'rnn', 'mlp', 'other'];
  const accelerators = ['none', 'nvidia', 'amd'];
  const rate = new Map<string, number>();
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const t = transformations[Math.floor(rand() * transformations.length)]!;
    const f = families[Math.floor(rand() * families.length)]!;
    const a = accelerators[Math.floor(rand() * accelerators.length)]!;
    const key = `${t}|${f}|${a}`;
    if (!rate.has(key)) {
      const u = rand();
      rate.set(key, u < 0.4 ? 0.03 : u < 0.8 ? 0.95 : 0.5);
    }
    out.push({ transformation: t, modelFamily: f, accelerator: a, outcome: rand() < rate.get(key)! ? 'ACCEPTED' : 'REJECTED' });
  }
  return out;
}

async function fromDatabase(url: string): Promise<Rec[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query(`SELECT transformation, "modelFamily", accelerator, outcome FROM "PreparationRecord"
      WHERE outcome IN ('ACCEPTED', 'REJECTED') AND kind = 'optimization' AND "modelFamily" IS NOT NULL ORDER BY "createdAt"`);
    return r.rows.map((x) => ({
      transformation: x.transformation,
      modelFamily: x.modelFamily,
      accelerator: x.accelerator ?? 'none',
      outcome: x.outcome,
    }));
  } finally {
    await client.end();
  }
}

const history = values['database-url']
  ? await fromDatabase(values['database-url'])
  : synthetic(Number(values.records), Number(values.seed));
const seen = new Map<string, { accepted: number; rejected: number }>();
const per = new Map<string, { runs: number; saved: number; missed: number }>();
for (const rec of history) {
  const key = `${rec.transformation}|${rec.modelFamily}|${rec.accelerator}`;
  const counts = seen.get(key) ?? { accepted: 0, rejected: 0 };
  const cases: SimilarCases = {
    key: { transformation: rec.transformation, modelFamily: rec.modelFamily, accelerator: rec.accelerator },
    own: [],
    network: { ...counts },
  };
  const v = verdictOf(cases);
  const row = per.get(rec.transformation) ?? { runs: 0, saved: 0, missed: 0 };
  row.runs++;
  if (v.skip) {
    row.saved++;
    if (rec.outcome === 'ACCEPTED') row.missed++;
  }
  per.set(rec.transformation, row);
  // The replayed record is evidence for the next ones only when it really ran (a skipped
  // candidate leaves no verdict behind), as in the stage.
  if (!v.skip)
    seen.set(key, {
      accepted: counts.accepted + (rec.outcome === 'ACCEPTED' ? 1 : 0),
      rejected: counts.rejected + (rec.outcome === 'REJECTED' ? 1 : 0),
    });
}

const total = [...per.values()].reduce((s, r) => ({ runs: s.runs + r.runs, saved: s.saved + r.saved, missed: s.missed + r.missed }), {
  runs: 0,
  saved: 0,
  missed: 0,
});
const accepted = history.filter((r) => r.outcome === 'ACCEPTED').length;
console.log(
  `similar-cases replay: ${history.length} candidate runs (${values['database-url'] ? 'from the database' : `synthetic, seed ${values.seed}`}), ${accepted} of them accepted`,
);
console.log('transformation           runs  saved  accepted missed');
for (const [t, r] of [...per.entries()].sort())
  console.log(`${t.padEnd(24)} ${String(r.runs).padStart(5)} ${String(r.saved).padStart(6)} ${String(r.missed).padStart(16)}`);
console.log(
  `${'total'.padEnd(24)} ${String(total.runs).padStart(5)} ${String(total.saved).padStart(6)} ${String(total.missed).padStart(16)}`,
);
console.log(
  `→ ${total.saved} candidate runs saved (${((100 * total.saved) / Math.max(1, total.runs)).toFixed(1)} %), ${total.missed} accepted changes missed (${((100 * total.missed) / Math.max(1, accepted)).toFixed(1)} % of the accepted)`,
);
console.log(
  `reproduce: node --import tsx bench/similarReplay.ts --records ${values.records} --seed ${values.seed}${values['database-url'] ? ' --database-url …' : ''}`,
);
