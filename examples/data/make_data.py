#!/usr/bin/env python3
"""Writes the example key files (run from anywhere; output is committed).

  keys_uint32.bin        raw: 10,000 distinct little-endian u32 keys, unsorted
  sosd_keys_uint64.bin   SOSD: u64 count 8,000, then 8,000 sorted u64 keys (all < 2^32)
  values_uint32.bin      raw: 8,000 little-endian u32 values
"""
import os
import random
import struct

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20240601)

raw = rng.sample(range(1 << 32), 10000)
with open(os.path.join(here, "keys_uint32.bin"), "wb") as f:
    f.write(struct.pack("<%dI" % len(raw), *raw))

sosd = sorted(rng.sample(range(1 << 32), 8000))
with open(os.path.join(here, "sosd_keys_uint64.bin"), "wb") as f:
    f.write(struct.pack("<Q", len(sosd)))
    f.write(struct.pack("<%dQ" % len(sosd), *sosd))

vals = [rng.randrange(1 << 32) for _ in range(8000)]
with open(os.path.join(here, "values_uint32.bin"), "wb") as f:
    f.write(struct.pack("<%dI" % len(vals), *vals))
