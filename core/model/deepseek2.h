// DeepSeek-V2/V3 (general.architecture = deepseek2), internal to core/model: its hyperparameters
// (deepseek2.cpp) beside the generic ones of hparams.cpp.
#pragma once
#include "rocmforge/gguf.h"
#include "rocmforge/model.h"

namespace rf {

// Reads the deepseek2 keys into hp.ds after the generic and expert keys (llama.cpp's
// LLM_ARCH_DEEPSEEK2 load_hparams) and sets the cache geometry of latent attention: head_dim =
// kv_lora_rank + n_rot, n_head_kv = 1. Throws rf::Error naming a missing or bad key.
void read_deepseek2_keys(ModelHparams &hp, const gguf::File &f);

} // namespace rf
