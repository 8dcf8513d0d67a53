// Roofline ceilings per backend (peak GB/s and TFLOP/s) used for the "% of ceiling" columns.
// From the profiler config {"ceilings": {"cpu": {"gbps": x, "tflops": y}}}, else a datasheet
// default picked by device name; the report prints which one was used.
#pragma once
#include <map>
#include <string>

#include "rocmforge/abi.h"

namespace rfprof {

struct Ceiling {
    double gbps = 0;
    double tflops = 0;
    std::string source; // "config" or "default (...)"
};

using CeilingConfig = std::map<std::string, Ceiling>; // backend name -> ceiling from config

Ceiling pick_ceiling(const CeilingConfig &configured, const std::string &backend, const rf_device_info &info);

} // namespace rfprof
