/* rt_sha256.c: SHA-256 (FIPS 180-4) for the kernel cache's keys and payload
 * checksums. Checked against the FIPS test vectors in runtime/tests/test_cache.c. */
#include <string.h>

#include "rt_internal.h"

static const uint32_t k256[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

static void block(RtSha256 *h, const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) {
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  }
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h->state[0], b = h->state[1], c = h->state[2], d = h->state[3];
  uint32_t e = h->state[4], f = h->state[5], g = h->state[6], hh = h->state[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h->state[0] += a;
  h->state[1] += b;
  h->state[2] += c;
  h->state[3] += d;
  h->state[4] += e;
  h->state[5] += f;
  h->state[6] += g;
  h->state[7] += hh;
}

void rt_sha256_init(RtSha256 *h) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(h->state, iv, sizeof iv);
  h->bytes = 0;
  h->used = 0;
}

void rt_sha256_update(RtSha256 *h, const void *data, size_t size) {
  const unsigned char *p = data;
  h->bytes += size;
  while (size > 0) {
    size_t n = 64 - h->used;
    if (n > size) {
      n = size;
    }
    memcpy(h->buf + h->used, p, n);
    h->used += n;
    p += n;
    size -= n;
    if (h->used == 64) {
      block(h, h->buf);
      h->used = 0;
    }
  }
}

void rt_sha256_final(RtSha256 *h, unsigned char out[32]) {
  uint64_t bits = h->bytes * 8;
  unsigned char pad = 0x80;
  rt_sha256_update(h, &pad, 1);
  pad = 0;
  while (h->used != 56) {
    rt_sha256_update(h, &pad, 1);
  }
  unsigned char len[8];
  for (int i = 0; i < 8; i++) {
    len[i] = (unsigned char)(bits >> (56 - 8 * i));
  }
  rt_sha256_update(h, len, 8);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(h->state[i] >> 24);
    out[4 * i + 1] = (unsigned char)(h->state[i] >> 16);
    out[4 * i + 2] = (unsigned char)(h->state[i] >> 8);
    out[4 * i + 3] = (unsigned char)h->state[i];
  }
}

void rt_sha256(const void *data, size_t size, unsigned char out[32]) {
  RtSha256 h;
  rt_sha256_init(&h);
  rt_sha256_update(&h, data, size);
  rt_sha256_final(&h, out);
}

void rt_hex(const unsigned char *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}
