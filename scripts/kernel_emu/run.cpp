// run.cpp: runs every kernel of csrc/ on the CPU under emu.h against the
// cases written by gen/ (inputs and the CPU backend's outputs) and reports
// each mismatch. Built and run by scripts/kernel_emu.sh.
//
// Launch shapes differ from the GPU's on purpose (small grids; 1-D kernels
// with 32 threads, row kernels with WICK_ROWTHREADS): every kernel must be
// correct for any grid. Layouts are packed right-aligned as cuda/plan.go's
// packLayout packs them.
#include "emu.h"
#include "../../csrc/wick.cu"
#include <cstdio>
#include <string>
#include <iostream>
#include <sstream>
#include <fstream>

struct Arr { bool isint; std::vector<float> f; std::vector<i64> i; };
struct Rec { std::string kind, name; std::vector<i64> ints; std::vector<Arr> a; };

static bool readRec(std::istream& in, Rec& r) {
    std::string line;
    if (!std::getline(in, line) || line.empty()) return false;
    std::istringstream hs(line);
    int ni, na;
    hs >> r.kind >> r.name >> ni >> na;
    std::getline(in, line);
    std::istringstream is(line);
    r.ints.resize(ni);
    for (auto& v : r.ints) is >> v;
    r.a.resize(na);
    for (auto& a : r.a) {
        std::getline(in, line);
        std::istringstream as(line);
        std::string t; size_t n; as >> t >> n;
        a.isint = t == "i64";
        if (a.isint) { a.i.resize(n); in.read((char*)a.i.data(), n * 8); }
        else { a.f.resize(n); in.read((char*)a.f.data(), n * 4); }
        std::getline(in, line);
    }
    return true;
}

static int failures = 0, checks = 0;
static bool close(float g, float w, double rel, double abs_) {
    if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
    if (std::isinf(w) || std::isinf(g)) return g == w;
    return std::fabs((double)g - w) <= rel * std::fabs((double)w) + abs_;
}
static void cmp(const std::string& what, const std::vector<float>& g, const std::vector<float>& w, double rel = 1e-5, double abs_ = 1e-6) {
    checks++;
    int bad = 0;
    for (size_t k = 0; k < w.size(); ++k)
        if (!close(g[k], w[k], rel, abs_)) {
            if (bad < 3) printf("  %s: element %zu: emu %.9g, cpu %.9g\n", what.c_str(), k, g[k], w[k]);
            bad++;
        }
    if (bad) { printf("FAIL %s: %d of %zu differ\n", what.c_str(), bad, w.size()); failures++; }
}
static void cmpi(const std::string& what, const std::vector<i64>& g, const std::vector<i64>& w) {
    checks++;
    int bad = 0;
    for (size_t k = 0; k < w.size(); ++k)
        if (g[k] != w[k]) { if (bad < 3) printf("  %s: element %zu: emu %lld, cpu %lld\n", what.c_str(), k, g[k], w[k]); bad++; }
    if (bad) { printf("FAIL %s: %d of %zu differ\n", what.c_str(), bad, w.size()); failures++; }
}

// a layout read from ints at position p: nd, shape, strides, offset
struct Lay { int nd; i64 shape[6], st[6]; i64 off; i64 n; };
static Lay lay(const std::vector<i64>& v, size_t& p) {
    Lay l{}; l.nd = (int)v[p++];
    for (int d = 0; d < l.nd; ++d) l.shape[d] = v[p++];
    for (int d = 0; d < l.nd; ++d) l.st[d] = v[p++];
    l.off = v[p++];
    l.n = 1; for (int d = 0; d < l.nd; ++d) l.n *= l.shape[d];
    return l;
}
// right-aligned packing (cuda/plan.go packLayout)
struct Packed { i64 s[6]; };
static Packed pshape(const Lay& l) { Packed p; int pad = 6 - l.nd; for (int i = 0; i < 6; ++i) p.s[i] = i < pad ? 1 : l.shape[i - pad]; return p; }
static Packed pst(const Lay& l) { Packed p; int pad = 6 - l.nd; for (int i = 0; i < 6; ++i) p.s[i] = i < pad ? 0 : l.st[i - pad]; return p; }
static i64 ctg[6];
static Lay contig(const Lay& l) { Lay c = l; i64 s = 1; for (int d = l.nd - 1; d >= 0; --d) { c.st[d] = s; if (l.shape[d] > 1) s *= l.shape[d]; } c.off = 0; return c; }
#define S6(p) p.s[0], p.s[1], p.s[2], p.s[3], p.s[4], p.s[5]

static dim3 G(unsigned x, unsigned y = 1) { dim3 d; d.x = x; d.y = y; return d; }
static const dim3 B1 = G(32), BR = G(WICK_ROWTHREADS);

int main(int argc, char** argv) {
    std::ifstream in(argv[1], std::ios::binary);
    Rec r;
    while (readRec(in, r)) {
        const auto& v = r.ints;
        std::string name = r.kind + "/" + r.name;
        if (r.kind == "unary") {
            size_t p = 1; int op = (int)v[0]; Lay l = lay(v, p);
            float A = r.a[0].f[0], Bp = r.a[0].f[1];
            const float* src = r.a[1].f.data() + l.off;
            std::vector<float> out(l.n, NAN);
            auto sh = pshape(l); auto st = pst(l);
            launch(G(2), B1, [&] { wick_unary_f32(out.data(), src, l.n, op, A, Bp, l.nd, S6(sh), S6(st)); });
            cmp(name + " strided", out, r.a[2].f);
            // contiguous fast path on a dense copy
            std::vector<float> dense(l.n), out2(l.n, NAN);
            Lay c = contig(l); auto cs = pst(c);
            launch(G(2), B1, [&] { wick_copy_f32(dense.data(), src, l.n, l.nd, S6(sh), S6(cs), S6(st)); });
            launch(G(2), B1, [&] { wick_unary_contig_f32(out2.data(), dense.data(), l.n, op, A, Bp); });
            cmp(name + " contig", out2, r.a[2].f);
        } else if (r.kind == "unarygrad") {
            int op = (int)v[0]; i64 n = v[1];
            std::vector<float> out(n, NAN);
            launch(G(2), B1, [&] { wick_unary_grad_f32(out.data(), r.a[1].f.data(), r.a[2].f.data(), r.a[3].f.data(), n, op, r.a[0].f[0], r.a[0].f[1]); });
            cmp(name, out, r.a[4].f);
        } else if (r.kind == "binary" || r.kind == "compare") {
            size_t p = 1; int op = (int)v[0]; Lay la = lay(v, p), lb = lay(v, p);
            std::vector<float> out(la.n, NAN);
            auto sh = pshape(la); auto sa = pst(la), sb = pst(lb);
            if (r.kind == "binary")
                launch(G(2), B1, [&] { wick_binary_f32(out.data(), r.a[0].f.data() + la.off, r.a[1].f.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
            else
                launch(G(2), B1, [&] { wick_compare_i64(out.data(), r.a[0].i.data() + la.off, r.a[1].i.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
            cmp(name, out, r.a[2].f);
        } else if (r.kind == "cast16") {
            // every pattern to float32 and float32 to 16 bits, bit for bit
            bool bf = v[0] == 0;
            const auto& all = r.a[0].i;
            size_t n = all.size(), m = r.a[2].f.size();
            std::vector<unsigned short> h(n), back(m);
            for (size_t k = 0; k < n; ++k) h[k] = (unsigned short)all[k];
            std::vector<float> wide(n);
            Lay l{}; l.nd = 1; l.shape[0] = (i64)n; l.st[0] = 1; auto sh = pshape(l); auto st = pst(l);
            if (bf) launch(G(3), B1, [&] { wick_cast_bf16_f32(wide.data(), (const wick_bf16*)h.data(), (i64)n, 1, S6(sh), S6(st), S6(st)); });
            else launch(G(3), B1, [&] { wick_cast_f16_f32(wide.data(), (const wick_f16*)h.data(), (i64)n, 1, S6(sh), S6(st), S6(st)); });
            checks++;
            int bad = 0;
            for (size_t k = 0; k < n; ++k) {
                unsigned a, b;
                memcpy(&a, &wide[k], 4);
                memcpy(&b, &r.a[1].f[k], 4);
                if (a != b && bad++ < 3) printf("  %s: pattern %#06zx: emu %#010x, cpu %#010x\n", name.c_str(), k, a, b);
            }
            Lay lm{}; lm.nd = 1; lm.shape[0] = (i64)m; lm.st[0] = 1; auto shm = pshape(lm); auto stm = pst(lm);
            if (bf) launch(G(3), B1, [&] { wick_cast_f32_bf16((wick_bf16*)back.data(), r.a[2].f.data(), (i64)m, 1, S6(shm), S6(stm), S6(stm)); });
            else launch(G(3), B1, [&] { wick_cast_f32_f16((wick_f16*)back.data(), r.a[2].f.data(), (i64)m, 1, S6(shm), S6(stm), S6(stm)); });
            for (size_t k = 0; k < m; ++k)
                if (back[k] != (unsigned short)r.a[3].i[k] && bad++ < 6)
                    printf("  %s: float32 %.9g: emu %#06x, cpu %#06x\n", name.c_str(), r.a[2].f[k], back[k], (unsigned)r.a[3].i[k]);
            if (bad) { printf("FAIL %s: %d casts differ\n", name.c_str(), bad); failures++; }
        } else if (r.kind == "unary16" || r.kind == "binary16") {
            // 16-bit views: inputs given as their float32 values, results
            // within one unit in the last place of the CPU's (both round
            // a float32 result once; the float32 results may differ in
            // their last bits)
            bool bf = v[0] == 0;
            double ulp = bf ? 0x1p-7 : 0x1p-10;
            auto to16 = [&](const std::vector<float>& f) {
                std::vector<unsigned short> h(f.size());
                for (size_t k = 0; k < f.size(); ++k) h[k] = bf ? wick_f32_to_bf16(f[k]) : wick_f32_to_f16(f[k]);
                return h;
            };
            auto wide = [&](const std::vector<unsigned short>& h) {
                std::vector<float> f(h.size());
                for (size_t k = 0; k < h.size(); ++k) f[k] = bf ? wick_bf16_to_f32(h[k]) : wick_f16_to_f32(h[k]);
                return f;
            };
            if (r.kind == "unary16") {
                size_t p = 2; int op = (int)v[1]; Lay l = lay(v, p);
                float A = r.a[0].f[0], Bp = r.a[0].f[1];
                auto src = to16(r.a[1].f);
                std::vector<unsigned short> out(l.n, 0xFFFF);
                auto sh = pshape(l); auto st = pst(l);
                if (bf) launch(G(2), B1, [&] { wick_unary_bf16((wick_bf16*)out.data(), (const wick_bf16*)src.data() + l.off, l.n, op, A, Bp, l.nd, S6(sh), S6(st)); });
                else launch(G(2), B1, [&] { wick_unary_f16((wick_f16*)out.data(), (const wick_f16*)src.data() + l.off, l.n, op, A, Bp, l.nd, S6(sh), S6(st)); });
                cmp(name, wide(out), r.a[2].f, ulp, 1e-7);
            } else {
                size_t p = 3; int op = (int)v[1]; Lay la = lay(v, p), lb = lay(v, p);
                auto a = to16(r.a[0].f), b = to16(r.a[1].f);
                auto sh = pshape(la); auto sa = pst(la), sb = pst(lb);
                bool cmpOp = v[2] != 0;
                if (cmpOp) {
                    std::vector<float> out(la.n, NAN);
                    if (bf) launch(G(2), B1, [&] { wick_compare_bf16(out.data(), (const wick_bf16*)a.data() + la.off, (const wick_bf16*)b.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
                    else launch(G(2), B1, [&] { wick_compare_f16(out.data(), (const wick_f16*)a.data() + la.off, (const wick_f16*)b.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
                    cmp(name, out, r.a[2].f, 0, 0);
                } else {
                    std::vector<unsigned short> out(la.n, 0xFFFF);
                    if (bf) launch(G(2), B1, [&] { wick_binary_bf16((wick_bf16*)out.data(), (const wick_bf16*)a.data() + la.off, (const wick_bf16*)b.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
                    else launch(G(2), B1, [&] { wick_binary_f16((wick_f16*)out.data(), (const wick_f16*)a.data() + la.off, (const wick_f16*)b.data() + lb.off, la.n, op, la.nd, S6(sh), S6(sa), S6(sb)); });
                    cmp(name, wide(out), r.a[2].f, ulp, 1e-7);
                }
            }
        } else if (r.kind == "where") {
            size_t p = 0; Lay lc = lay(v, p), la = lay(v, p), lb = lay(v, p);
            std::vector<float> out(lc.n, NAN);
            auto sh = pshape(lc); auto sc = pst(lc), sa = pst(la), sb = pst(lb);
            launch(G(2), B1, [&] { wick_where_f32(out.data(), r.a[0].f.data() + lc.off, r.a[1].f.data() + la.off, r.a[2].f.data() + lb.off, lc.n, lc.nd, S6(sh), S6(sc), S6(sa), S6(sb)); });
            cmp(name, out, r.a[3].f);
        } else if (r.kind == "copy") {
            size_t p = 1; int kind = (int)v[0]; Lay ld = lay(v, p), ls = lay(v, p);
            auto sh = pshape(ld); auto sd = pst(ld), ss = pst(ls);
            if (kind == 0) { auto d = r.a[0].f; launch(G(2), B1, [&] { wick_copy_f32(d.data() + ld.off, r.a[1].f.data() + ls.off, ld.n, ld.nd, S6(sh), S6(sd), S6(ss)); }); cmp(name, d, r.a[2].f, 0, 0); }
            if (kind == 1) { auto d = r.a[0].i; launch(G(2), B1, [&] { wick_copy_i64(d.data() + ld.off, r.a[1].i.data() + ls.off, ld.n, ld.nd, S6(sh), S6(sd), S6(ss)); }); cmpi(name, d, r.a[2].i); }
            if (kind == 2) { auto d = r.a[0].f; launch(G(2), B1, [&] { wick_cast_i64_f32(d.data() + ld.off, r.a[1].i.data() + ls.off, ld.n, ld.nd, S6(sh), S6(sd), S6(ss)); }); cmp(name, d, r.a[2].f, 0, 0); }
            if (kind == 3) { auto d = r.a[0].i; launch(G(2), B1, [&] { wick_cast_f32_i64(d.data() + ld.off, r.a[1].f.data() + ls.off, ld.n, ld.nd, S6(sh), S6(sd), S6(ss)); }); cmpi(name, d, r.a[2].i); }
        } else if (r.kind == "fill") {
            size_t p = 1; Lay l = lay(v, p); auto sh = pshape(l); auto st = pst(l);
            if (v[0] == 0) { std::vector<float> d(r.a[0].f.size(), 0); launch(G(2), B1, [&] { wick_fill_f32(d.data() + l.off, -3.0f, l.n, l.nd, S6(sh), S6(st)); }); cmp(name, d, r.a[0].f, 0, 0); }
            else { std::vector<i64> d(r.a[0].i.size(), 0); launch(G(2), B1, [&] { wick_fill_i64(d.data() + l.off, -3, l.n, l.nd, S6(sh), S6(st)); }); cmpi(name, d, r.a[0].i); }
        } else if (r.kind == "reduce") {
            size_t p = 2; int op = (int)v[0], dim = (int)v[1]; Lay l = lay(v, p);
            Lay o{}; o.nd = 0; o.n = 1;
            for (int d = 0; d < l.nd; ++d) if (d != dim) { o.shape[o.nd] = l.shape[d]; o.st[o.nd] = l.st[d]; o.n *= l.shape[d]; o.nd++; }
            if (o.nd == 0) { o.nd = 1; o.shape[0] = 1; o.st[0] = 1; }
            auto sh = pshape(o); auto st = pst(o);
            i64 n = l.shape[dim], rr = l.st[dim];
            const float* src = r.a[0].f.data() + l.off;
            for (int block = 0; block < 2; ++block) {
                std::string nm = name + (block ? " block" : " thread") + " op" + std::to_string(op) + " dim" + std::to_string(dim);
                if (r.name == "arg") {
                    std::vector<i64> out(o.n, -5);
                    if (block) launch(G(std::min<i64>(o.n, 3)), BR, [&] { wick_argreduce_f32(out.data(), src, o.n, n, rr, op, o.nd, S6(sh), S6(st)); });
                    else launch(G(2), B1, [&] { wick_argreduce_small_f32(out.data(), src, o.n, n, rr, op, o.nd, S6(sh), S6(st)); });
                    cmpi(nm, out, r.a[1].i);
                } else {
                    std::vector<float> out(o.n, NAN);
                    if (block) launch(G(std::min<i64>(o.n, 3)), BR, [&] { wick_reduce_f32(out.data(), src, o.n, n, rr, op, o.nd, S6(sh), S6(st)); });
                    else launch(G(2), B1, [&] { wick_reduce_small_f32(out.data(), src, o.n, n, rr, op, o.nd, S6(sh), S6(st)); });
                    cmp(nm, out, r.a[1].f);
                }
            }
            // the split reduction (pass 1 over tiles × chunks, pass 2
            // combining the chunks) at tile widths and chunk lengths
            // unlike the GPU's, down to five elements per chunk
            if (op != WICK_RLOGSUMEXP && n > 0)
                for (int tx : {1, 32})
                    for (i64 chunk : {(i64)5, n}) {
                        i64 chunks = (n + chunk - 1) / chunk, tiles = (o.n + tx - 1) / tx;
                        std::vector<double> part(chunks * o.n, NAN);
                        std::vector<i64> pidx(chunks * o.n, -5);
                        std::string nm = name + " split tx" + std::to_string(tx) + " chunk" + std::to_string(chunk) + " op" + std::to_string(op) + " dim" + std::to_string(dim);
                        launch(G(tiles, chunks), BR, [&] { wick_reduce_part_f32(part.data(), pidx.data(), src, o.n, n, rr, op, chunk, tx, o.nd, S6(sh), S6(st)); });
                        if (r.name == "arg") {
                            std::vector<i64> out(o.n, -5);
                            launch(G(2), B1, [&] { wick_reduce_final_f32(nullptr, out.data(), part.data(), pidx.data(), o.n, chunks, op, 0); });
                            cmpi(nm, out, r.a[1].i);
                        } else {
                            std::vector<float> out(o.n, NAN);
                            launch(G(2), B1, [&] { wick_reduce_final_f32(out.data(), nullptr, part.data(), nullptr, o.n, chunks, op, 0); });
                            cmp(nm, out, r.a[1].f);
                        }
                    }
        } else if (r.kind == "softmax") {
            i64 rows = v[0], cols = v[1]; int lg = (int)v[2];
            std::vector<float> y(rows * cols, NAN), dx(rows * cols, NAN);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_softmax_f32(y.data(), r.a[0].f.data(), rows, cols, lg); });
            cmp(name + (lg ? " log" : ""), y, r.a[1].f);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_softmax_grad_f32(dx.data(), r.a[2].f.data(), r.a[1].f.data(), rows, cols, lg); });
            cmp(name + (lg ? " log" : "") + " grad", dx, r.a[3].f);
        } else if (r.kind == "layernorm") {
            i64 rows = v[0], C = v[1];
            std::vector<float> y(rows * C, NAN), mean(rows, NAN), rstd(rows, NAN);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_layernorm_f32(y.data(), mean.data(), rstd.data(), r.a[0].f.data(), r.a[1].f.data(), r.a[2].f.data(), rows, C, 1e-5f); });
            cmp(name + " y", y, r.a[3].f); cmp(name + " mean", mean, r.a[4].f); cmp(name + " rstd", rstd, r.a[5].f);
            std::vector<double> mu(rows);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_layernorm_mu_f32(mu.data(), r.a[0].f.data(), rows, C); });
            std::vector<float> dx(rows * C, NAN), dw = r.a[7].f, db = r.a[8].f;
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_layernorm_dx_f32(dx.data(), r.a[6].f.data(), r.a[0].f.data(), mu.data(), r.a[5].f.data(), r.a[1].f.data(), rows, C); });
            cmp(name + " dx", dx, r.a[9].f);
            i64 chunk = 32, chunks = (rows + chunk - 1) / chunk;
            std::vector<double> part(chunks * 2 * C, NAN);
            launch(G((C + 255) / 256, chunks), G(256), [&] { wick_layernorm_dwdb_part_f32(part.data(), r.a[6].f.data(), r.a[0].f.data(), mu.data(), r.a[5].f.data(), rows, C, chunk); });
            launch(G(2), B1, [&] { wick_layernorm_dwdb_sum_f32(dw.data(), db.data(), part.data(), chunks, C); });
            cmp(name + " dw", dw, r.a[10].f); cmp(name + " db", db, r.a[11].f);
        } else if (r.kind == "embedding") {
            i64 num = v[0], n = v[1], L = v[2];
            std::vector<float> out(n * L, NAN);
            launch(G(2), B1, [&] { wick_gather_f32(out.data(), r.a[1].f.data(), r.a[0].i.data(), n, L, num); });
            cmp(name + " gather", out, r.a[2].f, 0, 0);
            auto dw = r.a[3].f;
            launch(G(2), B1, [&] { wick_scatter_add_f32(dw.data(), r.a[0].i.data(), r.a[4].f.data(), n, L, num); });
            cmp(name + " scatter", dw, r.a[5].f);
        } else if (r.kind == "sort") {
            i64 rows = v[0], cols = v[1]; int desc = (int)v[2];
            std::vector<float> vals(rows * cols, NAN);
            std::vector<i64> idx(rows * cols, -1);
            launch(G(2), B1, [&] { wick_sort_f32(vals.data(), idx.data(), r.a[0].f.data(), rows, cols, desc); });
            std::string what = name + " " + std::to_string(rows) + "x" + std::to_string(cols) + (desc ? " descending" : "");
            cmp(what + " values", vals, r.a[1].f, 0, 0);
            cmpi(what + " indices", idx, r.a[2].i);
        } else if (r.kind == "scan") {
            i64 rows = v[0], cols = v[1]; int prod = v[2] == 1, rev = (int)v[3];
            std::vector<float> y(rows * cols, NAN);
            launch(G(2), B1, [&] { wick_scan_f32(y.data(), r.a[0].f.data(), rows, cols, prod, rev); });
            cmp(name + " " + std::to_string(rows) + "x" + std::to_string(cols) + (rev ? " reverse" : ""), y, r.a[1].f, 0, 0);
        } else if (r.kind == "ce") {
            i64 rows = v[0], cols = v[1], ign = v[2]; float scale = r.a[0].f[0];
            std::vector<float> loss(rows, NAN), dx(rows * cols, NAN);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_crossentropy_f32(loss.data(), r.a[1].f.data(), r.a[2].i.data(), rows, cols, ign); });
            cmp(name + " loss", loss, r.a[3].f, 1e-5, 1e-6);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_crossentropy_grad_f32(dx.data(), r.a[1].f.data(), r.a[2].i.data(), rows, cols, ign, scale); });
            cmp(name + " grad", dx, r.a[4].f, 1e-5, 1e-9);
        } else if (r.kind == "adamw") {
            i64 n = v[0]; auto& s = r.a[0].f;
            auto p = r.a[1].f, m = r.a[3].f, vv = r.a[4].f;
            launch(G(2), B1, [&] { wick_adamw_f32(p.data(), r.a[2].f.data(), m.data(), vv.data(), n, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]); });
            cmp(name + " p", p, r.a[5].f, 0, 0); cmp(name + " m", m, r.a[6].f, 0, 0); cmp(name + " v", vv, r.a[7].f, 0, 0);
        } else if (r.kind == "attn") {
            i64 rows = v[0], T = v[1]; int causal = (int)v[2]; float scale = r.a[0].f[0];
            auto p = r.a[1].f;
            launch(G(std::min<i64>(rows, 3)), BR, [&] { wick_attn_softmax_f32(p.data(), rows, T, scale, causal); });
            cmp(name + " p", p, r.a[2].f, 1e-5, 1e-7);
            auto dp = r.a[3].f;
            launch(G(std::min<i64>(rows, 3)), BR, [&] { wick_attn_softmax_grad_f32(dp.data(), r.a[2].f.data(), rows, T, scale, causal); });
            cmp(name + " dS", dp, r.a[4].f, 1e-5, 1e-7);
        } else if (r.kind == "rmsnorm") {
            i64 rows = v[0], C = v[1];
            std::vector<float> y(rows * C, NAN), rstd(rows, NAN), dx(rows * C, NAN), dw = r.a[5].f;
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_rmsnorm_f32(y.data(), rstd.data(), r.a[0].f.data(), r.a[1].f.data(), rows, C, 1e-6f); });
            cmp(name + " y", y, r.a[2].f); cmp(name + " rstd", rstd, r.a[3].f);
            launch(G(std::min<i64>(rows, 2)), BR, [&] { wick_rmsnorm_dx_f32(dx.data(), r.a[4].f.data(), r.a[0].f.data(), r.a[3].f.data(), r.a[1].f.data(), rows, C); });
            cmp(name + " dx", dx, r.a[6].f);
            i64 chunk = 32, chunks = (rows + chunk - 1) / chunk;
            std::vector<double> part(chunks * C, NAN);
            launch(G((C + 255) / 256, chunks), G(256), [&] { wick_rmsnorm_dw_part_f32(part.data(), r.a[4].f.data(), r.a[0].f.data(), r.a[3].f.data(), rows, C, chunk); });
            launch(G(2), B1, [&] { wick_rmsnorm_dw_sum_f32(dw.data(), part.data(), chunks, C); });
            cmp(name + " dw", dw, r.a[7].f);
        } else if (r.kind == "rotary") {
            i64 A = v[0], H = v[1], T = v[2], D = v[3], off = v[7]; int tr = (int)v[8];
            std::vector<float> y(A * H * T * D, NAN);
            launch(G(2), B1, [&] { wick_rotary_f32(y.data(), r.a[0].f.data() + off, A, H, T, D, v[4], v[5], v[6], r.a[1].f.data(), r.a[2].f.data(), tr); });
            cmp(name + (tr ? " transpose" : ""), y, r.a[3].f, 0, 0);
        } else if (r.kind == "swiglu") {
            i64 n = v[0];
            std::vector<float> y(n, NAN), da(n, NAN), du(n, NAN);
            launch(G(2), B1, [&] { wick_swiglu_f32(y.data(), r.a[0].f.data(), r.a[1].f.data(), n); });
            cmp(name + " y", y, r.a[3].f, 0, 0);
            launch(G(2), B1, [&] { wick_swiglu_grad_f32(da.data(), du.data(), r.a[2].f.data(), r.a[0].f.data(), r.a[1].f.data(), n); });
            cmp(name + " dgate", da, r.a[4].f, 0, 0); cmp(name + " dup", du, r.a[5].f, 0, 0);
        } else if (r.kind == "gqa") {
            i64 rows = v[0], T = v[1], S = v[2], off = v[3]; float scale = r.a[0].f[0];
            auto p = r.a[1].f;
            launch(G(std::min<i64>(rows, 3)), BR, [&] { wick_gqa_softmax_f32(p.data(), rows, T, S, off, scale); });
            cmp(name + " p", p, r.a[2].f, 1e-5, 1e-7);
            auto dp = r.a[3].f;
            launch(G(std::min<i64>(rows, 3)), BR, [&] { wick_gqa_softmax_grad_f32(dp.data(), r.a[2].f.data(), rows, T, S, off, scale); });
            cmp(name + " dS", dp, r.a[4].f, 1e-5, 1e-7);
        } else if (r.kind == "random") {
            i64 n = v[0]; unsigned long long seed = (unsigned long long)v[1], off = (unsigned long long)v[2];
            std::vector<float> u(n, NAN), z(n, NAN), m(n, NAN);
            launch(G(2), B1, [&] { wick_rand_uniform_f32(u.data(), n, seed, off); });
            launch(G(2), B1, [&] { wick_rand_normal_f32(z.data(), n, seed, off); });
            launch(G(2), B1, [&] { wick_dropout_mask_f32(m.data(), n, 0.25f, 1 / (1 - 0.25f), seed, off); });
            cmp(name + " uniform", u, r.a[0].f, 0, 0); cmp(name + " normal", z, r.a[1].f, 1e-6, 1e-7); cmp(name + " dropout", m, r.a[2].f, 0, 0);
        } else {
            printf("unknown kind %s\n", r.kind.c_str()); failures++;
        }
    }
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
