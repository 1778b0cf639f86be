/*
 * hash_mix.h - the 64-bit hash the engine's in-memory memo tables key by: FNV-1a taken a word
 * at a time. Cheap and order-sensitive; a table compares its entries in full on equal hashes,
 * so the hash only has to spread them. Never stored (the canonical hash of a module is
 * ir/hash.h, SHA-256).
 */
#ifndef SP_IR_HASH_MIX_H
#define SP_IR_HASH_MIX_H

#include <stdint.h>

#define SP_HASH_SEED 1469598103934665603ULL

static inline uint64_t sp_hash_mix(uint64_t h, uint64_t x) {
  return (h ^ x) * 1099511628211ULL;
}

#endif /* SP_IR_HASH_MIX_H */
