"""Monte Carlo estimate of pi and a 1-D random walk — no dependencies.

    python simulate.py --samples 200000 --out results.json
"""
import argparse
import json
import math
import os
import random


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--samples", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", default="results.json")
    args = p.parse_args()
    rng = random.Random(args.seed)
    inside = 0
    for i in range(1, args.samples + 1):
        x, y = rng.random(), rng.random()
        inside += x * x + y * y <= 1.0
        if i % (args.samples // 5) == 0:
            est = 4 * inside / i
            print(f"{i} samples: pi ≈ {est:.5f}")
            print("CHATGPU_METRIC " + json.dumps({"step": i, "values": {"pi_error": abs(est - math.pi)}}), flush=True)
    walk = 0
    for _ in range(args.samples):
        walk += 1 if rng.random() < 0.5 else -1
    result = {"pi": 4 * inside / args.samples, "samples": args.samples, "walk_end": walk}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
