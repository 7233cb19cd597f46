// The oracle's answers (Verdict, Violation) and the rule catalog, for Python.
#include <pybind11/stl.h>

#include "core.hpp"
#include "ndkct/model/verdict.hpp"
#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/profile.hpp"

namespace ndkct::python {

void bind_oracle(py::module_& m) {
    py::class_<model::Violation>(
        m, "Violation",
        "One broken rule, as the oracle (the reference model in check mode) "
        "reported it: the rule IDs and one sentence saying what was "
        "expected and what the provider did.")
        .def_readonly("rules", &model::Violation::rules,
                      "Rule IDs of the catalog, e.g. ['FR-ALIGN-01'].")
        .def_readonly("message", &model::Violation::message, "What was expected and what happened.")
        .def_readonly("warning", &model::Violation::warning,
                      "True for an outcome the docs allow but the profile reads otherwise (not a "
                      "failure).")
        .def("describe", &model::Violation::describe, "\"FR-ALIGN-01: expected ..., got ...\"")
        .def("__str__", &model::Violation::describe)
        .def("__repr__",
             [](const model::Violation& v) { return "<Violation " + v.describe() + ">"; });

    py::class_<model::Verdict>(m, "Verdict",
                               "What the oracle found so far on an adapter: violations (failures) "
                               "and warnings, in the order they arose.")
        .def_readonly("violations", &model::Verdict::violations, "Every violation and warning.")
        .def_property_readonly("ok", &model::Verdict::ok, "No failure (warnings allowed).")
        .def_property_readonly("clean", &model::Verdict::clean, "Neither failures nor warnings.")
        .def_property_readonly(
            "failures",
            [](const model::Verdict& v) {
                std::vector<model::Violation> out;
                for (const auto& x : v.violations)
                    if (!x.warning) out.push_back(x);
                return out;
            },
            "The violations that are failures (not warnings).")
        .def_property_readonly(
            "rules",
            [](const model::Verdict& v) {
                std::vector<std::string> out;
                for (const auto& x : v.violations)
                    if (!x.warning)
                        for (const auto& r : x.rules)
                            if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
                return out;
            },
            "Rule IDs of the failures, each once, in order of appearance.")
        .def("describe", &model::Verdict::describe, "One violation per line.")
        .def("__bool__", &model::Verdict::ok, "True when there is no failure.")
        .def("__len__", [](const model::Verdict& v) { return v.violations.size(); })
        .def("__str__", &model::Verdict::describe)
        .def("__repr__", [](const model::Verdict& v) {
            return v.clean() ? std::string("<Verdict clean>")
                             : "<Verdict " + std::to_string(v.violations.size()) +
                                   " violation(s):\n" + v.describe() + ">";
        });

    py::class_<spec::Rule>(m, "Rule",
                           "A documented NDKPI rule of the catalog (spec/rules/catalog), with its "
                           "stable ID.")
        .def_readonly("id", &spec::Rule::id)
        .def_readonly("area", &spec::Rule::area)
        .def_readonly("function", &spec::Rule::function)
        .def_readonly("object", &spec::Rule::object)
        .def_property_readonly("level",
                               [](const spec::Rule& r) { return std::string(to_string(r.level)); })
        .def_readonly("advisory", &spec::Rule::advisory)
        .def_readonly("summary", &spec::Rule::summary)
        .def_readonly("sources", &spec::Rule::sources)
        .def_readonly("statuses", &spec::Rule::statuses)
        .def_readonly("related", &spec::Rule::related)
        .def("__repr__",
             [](const spec::Rule& r) { return "<Rule " + r.id + ": " + r.summary + ">"; });

    m.def(
        "rule",
        [](const std::string& id) {
            const spec::Rule* r = spec::builtin_catalog().find(id);
            if (!r) throw py::key_error("no rule '" + id + "' in the catalog");
            return *r;
        },
        py::arg("id"), "The catalog entry of a rule ID (KeyError when there is none).");
    m.def(
        "rules",
        []() {
            auto span = spec::builtin_catalog().rules();
            return std::vector<spec::Rule>(span.begin(), span.end());
        },
        "Every rule of the catalog.");
    m.def("profile_names", &spec::builtin_profile_names,
          "The built-in profiles (readings of the documentation's open questions).");
}

}  // namespace ndkct::python
