// Statistics every benchmark shares (bench/README.md, "Convention"): a bootstrap confidence
// interval over rounds, the "settled" verdict (the interval within +-3 % of the figure) and the
// one-line JSON record `./ndkct bench` collects. Header-only, C++20, no dependency: any
// benchmark of any folder may include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ndkct::bench {

// The half-width, relative to the figure, under which a figure counts as settled.
inline constexpr double kSettledWithin = 0.03;

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t at = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(at, v.size() - 1)];
}

// A figure with its 95 % interval. `settled`: the interval lies within kSettledWithin of the
// value on both sides; otherwise the machine was too noisy (or the rounds too few) to conclude.
struct Interval {
    double value = 0, low = 0, high = 0;
    int rounds = 0;
    bool settled() const {
        if (rounds < 2 || value == 0) return false;
        return (value - low) <= kSettledWithin * std::fabs(value) &&
               (high - value) <= kSettledWithin * std::fabs(value);
    }
    double half_width_percent() const {
        return value == 0 ? 0 : 100 * std::max(value - low, high - value) / std::fabs(value);
    }
};

// Percentile bootstrap of `statistic` over the rounds: resample the rounds with replacement
// `resamples` times. Deterministic (a fixed xorshift seed), so two runs on the same figures
// print the same interval.
inline Interval bootstrap(const std::vector<double>& rounds,
                          const std::function<double(const std::vector<double>&)>& statistic,
                          int resamples = 2000) {
    Interval out;
    out.rounds = static_cast<int>(rounds.size());
    out.value = statistic(rounds);
    if (rounds.size() < 2) {
        out.low = out.high = out.value;
        return out;
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    std::vector<double> stats, sample(rounds.size());
    stats.reserve(static_cast<size_t>(resamples));
    for (int b = 0; b < resamples; ++b) {
        for (double& x : sample)
            x = rounds[next() % rounds.size()];
        stats.push_back(statistic(sample));
    }
    out.low = percentile(stats, 0.025);
    out.high = percentile(stats, 0.975);
    return out;
}

// The usual case: the median of per-round figures (per-round ratios NDK/raw, rates...).
inline Interval bootstrap_median(const std::vector<double>& rounds, int resamples = 2000) {
    return bootstrap(
        rounds, [](const std::vector<double>& v) { return median(v); }, resamples);
}

// For a benchmark that adds rounds until its figures settle: true once there are at least
// `min_rounds` rounds and the median's interval is within kSettledWithin.
inline bool settled_after(const std::vector<double>& rounds, int min_rounds) {
    return static_cast<int>(rounds.size()) >= min_rounds && bootstrap_median(rounds).settled();
}

// One figure as `./ndkct bench` collects it: a line on stdout starting with "ndkct-bench: "
// followed by one JSON object (bench/README.md, "Convention").
struct Figure {
    std::string bench;  // the benchmark's name, e.g. "verbs"
    std::string name;   // the figure, dotted, stable between commits: "fastreg.16p.ratio_raw"
    double value = 0;   // the figure itself
    std::string unit;   // "ratio", "cycles/s", "us", "calls/s", "sequences/s", "bytes"...
    const Interval* ci = nullptr;  // with an interval: ci_low, ci_high, rounds, settled
    std::string better;            // "higher" or "lower" (empty: neither, e.g. a size)
    std::string target;            // the target as text, e.g. ">= 1.0" (empty: none)
    std::string note;              // anything a reader needs (load, mode)
};

inline std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

inline std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

inline void emit(const Figure& f, std::FILE* out = stdout) {
    std::string line = "ndkct-bench: {\"bench\":\"" + json_escape(f.bench) + "\",\"name\":\"" +
                       json_escape(f.name) + "\",\"value\":" + json_number(f.value) +
                       ",\"unit\":\"" + json_escape(f.unit) + "\"";
    if (f.ci) {
        line += ",\"ci_low\":" + json_number(f.ci->low) +
                ",\"ci_high\":" + json_number(f.ci->high) +
                ",\"rounds\":" + std::to_string(f.ci->rounds) +
                ",\"settled\":" + (f.ci->settled() ? "true" : "false");
    }
    if (!f.better.empty()) line += ",\"better\":\"" + json_escape(f.better) + "\"";
    if (!f.target.empty()) line += ",\"target\":\"" + json_escape(f.target) + "\"";
    if (!f.note.empty()) line += ",\"note\":\"" + json_escape(f.note) + "\"";
    line += "}\n";
    std::fputs(line.c_str(), out);
    std::fflush(out);
}

}  // namespace ndkct::bench
