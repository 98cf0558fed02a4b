// Tokenize framed texts with llama.cpp's vocabulary code (vocab-only load).
// stdin-free: argv[1] = gguf, argv[2] = input file of records "<byte length>\n<bytes>".
// Output: one line per record: ids with parse_special=false, a tab, ids with parse_special=true.
#include "llama.h"
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void quiet(enum ggml_log_level, const char *, void *) {}

static std::string ids(const llama_vocab * v, const std::string & s, bool special) {
    std::vector<llama_token> out(s.size() * 2 + 16);
    int n = llama_tokenize(v, s.data(), (int32_t) s.size(), out.data(), (int32_t) out.size(), false, special);
    if (n < 0) {
        out.resize(-n);
        n = llama_tokenize(v, s.data(), (int32_t) s.size(), out.data(), (int32_t) out.size(), false, special);
    }
    std::ostringstream o;
    for (int i = 0; i < n; ++i) {
        if (i) o << ' ';
        o << out[i];
    }
    return o.str();
}

int main(int argc, char ** argv) {
    if (argc < 3) { fprintf(stderr, "usage: tok VOCAB.gguf RECORDS\n"); return 2; }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    auto mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * m = llama_model_load_from_file(argv[1], mp);
    if (!m) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * v = llama_model_get_vocab(m);
    std::ifstream in(argv[2], std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        size_t len = std::strtoul(line.c_str(), nullptr, 10);
        std::string s(len, '\0');
        in.read(&s[0], (std::streamsize) len);
        printf("%s\t%s\n", ids(v, s, false).c_str(), ids(v, s, true).c_str());
    }
    llama_model_free(m);
    return 0;
}
