// sha256.cpp — SHA-256 (FIPS 180-4) through OpenSSL's libcrypto EVP interface (Debian's libssl-dev); checked
// in tests/ui/test_gui_units.cpp against the FIPS 180-2 example digests.
#include "formats/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

namespace diffscope {
namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string to_hex(const unsigned char* d, unsigned n) {
  std::string out(2 * n, '0');
  for (unsigned i = 0; i < n; ++i) std::snprintf(&out[2 * i], 3, "%02x", d[i]);
  return out;
}

// Feeds `read(buf, cap)` chunks (returns bytes read, 0 at the end, < 0 on error) into SHA-256; "" on error.
template <class Read>
std::string digest(Read read) {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return "";
  std::vector<char> buf(1 << 16);
  for (;;) {
    const long n = read(buf.data(), buf.size());
    if (n < 0) return "";
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx.get(), buf.data(), size_t(n)) != 1) return "";
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) return "";
  return to_hex(md, len);
}

}  // namespace

std::string sha256_hex(const std::string& data) {
  size_t pos = 0;
  return digest([&](char* b, size_t cap) {
    const size_t n = std::min(cap, data.size() - pos);
    std::copy_n(data.data() + pos, n, b);
    pos += n;
    return long(n);
  });
}

std::string sha256_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  return digest([&](char* b, size_t cap) {
    f.read(b, std::streamsize(cap));
    if (f.bad()) return -1L;
    return long(f.gcount());
  });
}

}  // namespace diffscope
