// What the C handles are: a model is an rf::Session, a context an rf::InferenceContext with the
// logits of its last decode indexed by batch position.
#pragma once
#include <memory>
#include <vector>

#include "rocmforge/rocmforge.h"
#include "rocmforge/sampler.h"
#include "rocmforge/session.h"

struct rocmforge_model {
    rf::Session session;
};

struct rocmforge_context {
    rocmforge_model *model = nullptr;
    std::unique_ptr<rf::InferenceContext> ctx;
    const std::vector<float> *logits = nullptr; // of the last decode
    std::vector<int32_t> logit_row;             // batch index -> row in *logits, -1: not asked for
};

struct rocmforge_sampler {
    rf::Sampler sampler;
};
