"""Monte-Carlo estimate of pi with its standard error — plain Python, no dependencies.

    python pi.py --samples 2000000 --seed 42 --out outputs/result.json

Every sample is independent of the others, so the work splits into shards: each shard runs
this same program with its share of --samples and its own --seed, and the estimates merge
as a sample-weighted mean (see README.md).
"""
import argparse
import json
import math
import os
import random


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", default="outputs/result.json")
    args = p.parse_args()
    rng = random.Random(args.seed)
    hits = 0
    for _ in range(args.samples):
        x = rng.random()
        y = rng.random()
        hits += x * x + y * y <= 1.0
    share = hits / args.samples
    estimate = 4 * share
    stderr = 4 * math.sqrt(share * (1 - share) / args.samples)
    result = {"estimate": estimate, "stderr": stderr, "samples": args.samples, "hits": hits}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
