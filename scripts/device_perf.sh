#!/usr/bin/env bash
# Performance-work runs on the lent GPU (H100, now H200) from a prebuilt dist/ (scripts/make_dist.sh), several steps
# in one device call. Logs -> $OUT; a summary (summary.txt) is printed last.
# Usage: scripts/device_perf.sh STEP...   steps:
#   opcheck   every op against the CPU plugin (correctness)
#   opperf    kernel times of the decode-shaped matmuls (2..16 columns) and decode attention
#   batched   bench-inference on 7B Q4_K_M, 1..16 sequences; A/B of the column kernels
#             (hip.mvq_max_cols=1: the tile/generic path)
#   bench     pp512/tg128 of 7B Q4_K_M, 7B Q4_0, TinyLlama Q4_K_M against the yardstick
#   m1perf    decode (M = 1) matmul kernel times
#   attperf   decode attention kernel times, streaming kernels against rf_attention_dec*
#   h16       F16 prefill matmul kernel times, rf_mm_h16 tiles against rf_mm_mma_f16
#   serveload 16 streaming clients of rocmforge serve (7B Q4_K_M) against bench-inference --batches 16
#   yard      pp512/tg128 of 7B Q5_K_M, Q6_K, Q8_0, F16 against the yardstick (YARD_TYPES, YARD_REPS)
#   depth     pp512 / tg128 with 2k / 8k tokens in context (bench -d) on 7B Q4_K_M, same A/B
#   final     the issue's benchmark table with baselines saved in \$OUT
#   ab        the same for any HIP backend option: AB_KEY=KEY (docs/OPTIONS.md), AB_VALS="A B"
#   abpp      pp512 A/B of AB_KEY
#   pdl       decode with programmatic dependent launch on and off (hip.pdl), tokens compared
#   kprof     Nsight Compute per-kernel times of a decode step (TinyLlama Q4_K_M, 7B Q4_0)
#   profov    --profile (observer; kernel timestamps and, hip.observer_events=on, events) against
#             no profiler: decode speed and greedy tokens, GPU time per step, per-op table of both
#   stats     hip.stats=true: GPU time and host gap per decode step
#   bstats    the same while KB (default 16) sequences decode together
#   packab    the sm_90 pack against none (JIT base kernels): info, opcheck, tokens, ab, batched decode
#   greedy    GPU vs CPU greedy tokens and batched = single tokens on the trained model
#   mmqp      prefill matmul kernel times (M = 512, 2048): integer tensor-core kernels
#             (rf_mmqp_*) against the f16 ones (hip.mmq_prefill=false)
#   ppl       GPU vs CPU perplexity of the trained model (F16, Q8_0, Q4_K_M; -c 128 and 512, so
#             the prefill kernels run; every chunk of heldout.txt: over 16 chunks a sub-ulp change
#             of one dot moves the quantized models' perplexity by up to 0.1%) and greedy tokens after a 300-token prompt (TinyLlama
#             Q4_K_M: the tensor-core prefill attention)
#   depthab   tg64 at 8k context (bench -d 8192) for DEPTH_KEY (default attention_blocks_per_sm)
#             at each of DEPTH_VALS (default "4 8 16"), interleaved
#   attpp     prefill attention kernel times, tensor-core kernels against the shader-core ones
#             (hip.attention_mma=false)
#   memcheck  compute-sanitizer memcheck over opcheck and over generate runs that take the
#             prefill (mmqp, tensor-core attention) and decode paths
#   kdetail8k Nsight Compute details of the decode attention at 8k context
#   kdetailb  Nsight Compute details of the kernels in KERNELS while KB sequences decode (7B Q4_K_M)
#   mmq16     the 16-column decode matmuls (rf_mmq_*_16_k*): kernel times of the M=16 shapes under each
#             hip.mmq_ksplit, then Nsight Compute details of the Q4_K and Q6_K kernels in decode
#   bsweep    batched decode S_TG for each configuration in CONFIGS, interleaved
#   tgsweep   tg128 of each model in MODELS for each configuration in CONFIGS, interleaved REPS times
#   tokcmp    generate's tokens with the HIP options TOK_A (default none) against TOK_B ("a=1,b=2":
#             comma-joined KEY=VALUE): TinyLlama and 7B Q4_K_M and the trained model, greedy, sampled
#             and 3 / 4 sequences; any difference makes the script exit 1
#   fusecmp   greedy tokens of 2..12 sequences with the decode fusions on and off
#   candab    the sampler's candidates chosen on the GPU against whole logits rows read back
#             (--candidates on / off): bench-inference S_TG and TTFT of 7B Q4_K_M and TinyLlama,
#             interleaved; sampled and greedy tokens of 1 and 3 sequences compared
#   binab     tg128 (BINAB_PP=1: also pp512) of the bench models for each binary in BINS, interleaved
#   families  qwen3/gemma2/gemma3/phi3: GPU vs CPU greedy tokens (tiny shapes), pp512/tg128 (real shapes)
#   kprofpp   Nsight Compute per-kernel totals of pp512 runs (7B Q4_K_M, 7B Q4_0)
#   gptoss    gpt-oss: opcheck of its cases (sinks, YaRN rope, SWIGLU_OAI, ADD_ID, mode 2, its expert
#             FFN graph), GPU vs CPU greedy tokens on tiny-gpt-oss (Q8_0: MXFP4 experts; F16),
#             pp512/tg128 of gpt-oss-20b Q8_0 (GPTOSS_BENCH: other shapes)
#   moe       mixture of experts: opcheck of the MoE cases, GPU vs CPU greedy tokens on tiny-mixtral /
#             tiny-qwen3moe, MATMUL_ID kernel times (GB/s of the chosen experts' bytes; prefill also
#             with the grouped path off, hip.moe_group_min=0), pp512/tg128 (both ways)
#             and the profiler's per-op bytes of a decode run on mixtral-8x7b / qwen3-30b-a3b Q4_K_M
set -u
failed=0 # set by checks whose failure must fail the call (fusecmp); the exit status at the end
D=${DIST:-dist}
RF=$D/tools/rocmforge
OUT=${OUT:-/tmp/out}
mkdir -p /tmp/m "$OUT"
V=tests/data/vocab/ggml-vocab-llama-spm.gguf
Y=$D/yardstick # scripts/make_dist.sh copies ../shared/yardstick there (../shared does not travel)
S=$OUT/summary.txt
# The GPU's short name for baseline files (h100, h200, ...): our numbers are kept per GPU model;
# the yardstick ($Y/llamacpp-h100-*) stays the H100 one whatever runs this.
G=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'H[0-9]{3}|A[0-9]{3}|L[0-9]{2}' | head -1 | tr A-Z a-z)
G=${G:-gpu}
log() { echo "$*" | tee -a "$S"; }
# HIP backend options for rocmforge: "a=1,b=x" (comma-joined KEY=VALUE; "-" or empty: none) ->
# --backend-option hip.a=1 --backend-option hip.b=x; CONFIG=path: --config path.
hip_opts() {
  local kv
  [ -z "${1:-}" ] || [ "$1" = "-" ] && return 0
  for kv in $(echo "$1" | tr ',' ' '); do
    case $kv in CONFIG=*) printf -- '--config %s ' "${kv#CONFIG=}" ;; *) printf -- '--backend-option hip.%s ' "$kv" ;; esac
  done
}
greedy_vs_cpu() { # "SHAPES" "TYPES" TAG: greedy tokens of each tiny model on hip and cpu, logged identical / DIFFER
  local sh t m b r
  for sh in $1; do
    for t in $2; do
      m=$(model $sh $t)
      for b in cpu hip; do
        timeout 120 $RF generate -m $m -p "Once upon a time" -n 24 --temp 0 --backend $b -t 16 2>"$OUT/$3-$b.err" > "$OUT/$3-$b.txt"
      done
      cmp -s "$OUT/$3-cpu.txt" "$OUT/$3-hip.txt" && r=identical || r="DIFFER ($(tail -1 "$OUT/$3-hip.err" | cut -c1-160))"
      log "greedy $sh $t, hip vs cpu: $r"
    done
  done
}
bench_line() { # model [timeout [hip options]] -> "pp512: X  tg128: Y" (bench -p 512 -n 128 -r 2 on hip), or the error
  timeout ${2:-200} $RF bench -m $1 -p 512 -n 128 -r 2 --backend hip $(hip_opts "${3:-}") 2>&1 | grep -E "pp512|tg128|rror" | \
    awk -F'|' 'NF > 3 {printf "%s: %s  ", $(NF-2), $(NF-1); next} {printf "%s  ", substr($0, 1, 200)}'
}
model() { # shape type -> path (made once per machine)
  local f=/tmp/m/$1-$2.gguf
  [ -f "$f" ] || $RF mkmodel --shape $1 --type $2 --vocab $V -o "$f" --seed 7 -t 16 > /dev/null 2>&1 || log "mkmodel $1 $2 FAILED"
  echo "$f"
}
for step in "$@"; do
  t0=$(date +%s)
  case $step in
  opcheck) # every case, then the matmuls with each prefill tile width forced (the host's choice
    # depends on the shape, so small cases alone would not reach both)
    timeout 300 $D/tests/hip/rocmforge-opcheck > "$OUT/opcheck.txt" 2>&1
    log "opcheck rc=$? $(tail -1 "$OUT/opcheck.txt")"; grep -E "FAIL" "$OUT/opcheck.txt" | head -20 | tee -a "$S"
    for c in 64 128; do # (h16_tokens: the F16 kernels' token tile)
      timeout 120 $D/tests/hip/rocmforge-opcheck --option mmqp_cols=$c --option h16_tokens=$c --option h16_splits=$((c / 32)) \
        --filter matmul > "$OUT/opcheck-cols$c.txt" 2>&1
      log "opcheck matmul, mmqp_cols=$c rc=$? $(tail -1 "$OUT/opcheck-cols$c.txt")"; grep -E "FAIL" "$OUT/opcheck-cols$c.txt" | head -10 | tee -a "$S"
    done
    # The K-quants on the dequantizing wgmma tiles too (off by default), split over two forced.
    timeout 120 $D/tests/hip/rocmforge-opcheck --option q16w_kquants=on --option h16_splits=2 --filter matmul > "$OUT/opcheck-q16w.txt" 2>&1
    log "opcheck matmul, q16w_kquants=on h16_splits=2 rc=$? $(tail -1 "$OUT/opcheck-q16w.txt")"
    grep -E "FAIL" "$OUT/opcheck-q16w.txt" | head -10 | tee -a "$S" ;;
  opperf)
    timeout 200 $D/tests/hip/rocmforge-opcheck --perf --filter "matmul" > "$OUT/opperf.txt" 2>&1
    log "-- opperf"; grep -E "N=11008|N=14336|K=2048|K=5632" "$OUT/opperf.txt" | tee -a "$S"
    for st in true false; do
      timeout 200 $D/tests/hip/rocmforge-opcheck --option attention_stream=$st --perf --filter "attention" > "$OUT/opperf-att$st.txt" 2>&1
      log "-- attention, attention_stream=$st"; grep -E "T=1 |T=16 " "$OUT/opperf-att$st.txt" | tee -a "$S"
    done ;;
  m1perf) # decode (M = 1) matmul kernel times
    timeout 200 $D/tests/hip/rocmforge-opcheck --perf --filter "M=1" > "$OUT/opperf-m1.txt" 2>&1
    log "-- M = 1 matmuls"; grep -E "matmul" "$OUT/opperf-m1.txt" | tee -a "$S" ;;
  attperf)
    for st in true false; do
      timeout 200 $D/tests/hip/rocmforge-opcheck --option attention_stream=$st --perf --filter "attention" > "$OUT/opperf-att$st.txt" 2>&1
      log "-- attention, attention_stream=$st"; grep -E "T=1 |T=16 " "$OUT/opperf-att$st.txt" | tee -a "$S"
    done ;;
  batched)
    m=$(model llama2-7b Q4_K_M)
    for c in 16 8 1; do
      log "-- batched 7B Q4_K_M hip.mvq_max_cols=$c"
      timeout 200 $RF bench-inference -m $m --prompts 0 --batches ${BATCHES:-1,2,4,8,16} -n 64 -r 2 \
        --backend hip --backend-option hip.mvq_max_cols=$c 2>>"$OUT/batched.err" | grep -E "generation|batch" | tee -a "$S"
    done ;;
  bench)
    for spec in "llama2-7b Q4_K_M llamacpp-h100-llama2-7b-Q4_K_M" "llama2-7b Q4_0 llamacpp-h100-llama2-7b-Q4_0" \
                "tinyllama-1.1b Q4_K_M llamacpp-h100-tinyllama-1.1b-Q4_K_M"; do
      set -- $spec
      timeout 200 $RF bench -m $(model $1 $2) -p 512 -n 128 -r 5 --backend hip --compare-baseline $Y/$3.json --threshold 0 --force \
        > "$OUT/bench-$1-$2.txt" 2>&1
      log "-- bench $1 $2"; grep -E "pp512|tg128" "$OUT/bench-$1-$2.txt" | tee -a "$S"
    done ;;
  h16) # F16 prefill matmul kernel times: rf_mm_h16 (chosen tile, 64, 128) against rf_mm_mma_f16 (h16_tokens=0)
    for h in -1 64 128 0; do
      timeout 120 $D/tests/hip/rocmforge-opcheck --option h16_tokens=$h --perf --filter "matmul f16" > "$OUT/h16-$h.txt" 2>&1
      log "-- F16 matmuls, h16_tokens=$h"; grep -E "M=(128|512|2048)" "$OUT/h16-$h.txt" | tee -a "$S"
    done ;;
  serveload) # issue 14: 16 streaming clients of `rocmforge serve` on 7B Q4_K_M, against bench-inference's S_TG at 16
    m=$(model llama2-7b Q4_K_M)
    timeout 200 $RF bench-inference -m $m --prompts 0 --batches 16 --prompt-len 128 -n 128 -r 1 --backend hip 2>/dev/null \
      | grep -E "^\|" | tee -a "$S"
    timeout $(( ${SERVE_SECS:-60} + 120 )) python3 scripts/serve_load.py --rocmforge $RF -m $m --clients ${SERVE_CLIENTS:-16} \
      --duration ${SERVE_SECS:-60} --temperature ${SERVE_TEMP:-0.8} --server-args "--backend hip --parallel ${SERVE_CLIENTS:-16} -c 16384" \
      > "$OUT/serveload.txt" 2>&1
    log "serve_load ${SERVE_CLIENTS:-16} clients rc=$?"; tail -14 "$OUT/serveload.txt" | tee -a "$S" ;;
  yard) # pp512/tg128 of the other yardstick formats (7B Q5_K_M, Q6_K, Q8_0, F16) against llama.cpp
    for t in ${YARD_TYPES:-Q5_K_M Q6_K Q8_0 F16}; do
      f=$(model llama2-7b $t)
      timeout 240 $RF bench -m $f -p 512 -n 128 -r ${YARD_REPS:-3} --backend hip --compare-baseline $Y/llamacpp-h100-llama2-7b-$(echo $t | sed 's/^F16$/f16/').json \
        --threshold 0 --force > "$OUT/yard-$t.txt" 2>&1
      log "-- yard llama2-7b $t"; grep -E "pp512|tg128|rror" "$OUT/yard-$t.txt" | tee -a "$S"
      [ "$t" = F16 ] && rm -f "$f" # 13 GB
    done ;;
  depth)
    for st in true false; do
      timeout 300 $RF bench -m $(model llama2-7b Q4_K_M) -p 512 -n 128 -d 2048,8192 -r 2 --backend hip \
        --backend-option hip.attention_stream=$st > "$OUT/depth$st.txt" 2>&1
      log "-- depth, attention_stream=$st"; grep -E "@ d|rror" "$OUT/depth$st.txt" | tee -a "$S"
    done ;;
  greedy)
    for m in models/trained/kjv-q8_0.gguf $(model tinyllama-1.1b Q4_K_M); do
      for b in cpu hip; do
        timeout 120 $RF generate -m $m -p "In the beginning" -n 32 --temp 0 --backend $b -t 16 2>/dev/null > "$OUT/gen-$b.txt"
      done
      cmp -s "$OUT/gen-cpu.txt" "$OUT/gen-hip.txt" && log "greedy $(basename $m): identical" || log "greedy $(basename $m): DIFFER"
      timeout 120 $RF generate -m $m -p "In the beginning" -n 32 --temp 0 --backend hip --parallel 4 2>/dev/null > "$OUT/gen-par.txt"
      # Each "--- sequence i ---" block of the parallel run against the single run's text.
      same=0
      for i in 0 1 2 3; do
        awk -v s="--- sequence $i ---" '$0 == s {on = 1; next} /^--- sequence / {on = 0} on' "$OUT/gen-par.txt" > "$OUT/gen-par-$i.txt"
        cmp -s "$OUT/gen-par-$i.txt" "$OUT/gen-hip.txt" && same=$((same + 1))
      done
      log "parallel 4 $(basename $m): $same of 4 sequences identical to the single run (gen-par.txt; the random-weight models' near-ties may differ: the batched prefill sums in another order)"
    done ;;
  final) # the issue's table: baselines of pp/tg, depth, batched decode and TTFT (JSON in $OUT)
    for spec in "llama2-7b Q4_K_M" "llama2-7b Q4_0" "tinyllama-1.1b Q4_K_M"; do
      set -- $spec
      timeout 200 $RF bench -m $(model $1 $2) -p 512 -n 128 -r 5 --backend hip --save-baseline "$OUT/baseline-$G-$1-$2.json" \
        --compare-baseline $Y/llamacpp-h100-$1-$2.json --threshold 0 --force > "$OUT/final-$1-$2.txt" 2>&1
      log "-- $1 $2"; grep -E "pp512|tg128" "$OUT/final-$1-$2.txt" | tee -a "$S"
    done
    m=$(model llama2-7b Q4_K_M)
    timeout 300 $RF bench -m $m -p 512 -n 128 -d 2048,8192 -r 3 --backend hip --save-baseline "$OUT/baseline-$G-llama2-7b-Q4_K_M-depth.json" \
      2>&1 | grep -E "@ d" | tee -a "$S"
    timeout 300 $RF bench-inference -m $m --prompts 512 --batches 1,2,4,8,16 --prompt-len 128 -n 128 -r 2 --backend hip \
      --save-baseline "$OUT/baseline-$G-llama2-7b-Q4_K_M-inference.json" 2>/dev/null | grep -E "^\|" | tee -a "$S" ;;
  ab) # interleaved decode A/B of one HIP backend option: AB_KEY=KEY, AB_VALS="A B" (default prefetch
    # "on off"; a key without values: "true false"), tokens compared; AB_MODELS="shape:type ..." (default 7B Q4_K_M, 7B Q4_0, TinyLlama
    # Q4_K_M), AB_REPS rounds (2)
    v=${AB_KEY:-prefetch}
    vals=${AB_VALS:-$([ -n "${AB_KEY:-}" ] && echo "true false" || echo "on off")}
    for spec in ${AB_MODELS:-llama2-7b:Q4_K_M llama2-7b:Q4_0 tinyllama-1.1b:Q4_K_M}; do
      set -- ${spec/:/ }
      m=$(model $1 $2)
      for rep in $(seq ${AB_REPS:-2}); do
        for p in $vals; do
          r=$(timeout 120 $RF bench -m $m -p 0 -n 128 -r 3 --backend hip $(hip_opts $v=$p) 2>/dev/null | grep tg128 | awk -F'|' '{print $(NF-1)}')
          log "tg128 $1 $2 $v=$p: $r"
        done
      done
      for p in $vals; do
        timeout 120 $RF generate -m $m -p "In the beginning" -n 48 --temp 0 --backend hip $(hip_opts $v=$p) 2>/dev/null > "$OUT/ab-$p.txt"
      done
      set -- $vals
      cmp -s "$OUT/ab-$1.txt" "$OUT/ab-$2.txt" && log "greedy $spec $v $vals: identical" || log "greedy $spec $v $vals: DIFFER"
    done ;;
  tgsweep) # tg128 (bench -p 0 -n 128 -r 3) of MODELS ("shape:type ...", default 7B Q4_K_M, 7B Q4_0,
    # TinyLlama Q4_K_M) under each configuration in CONFIGS ("a=1,b=2 a=0 -": comma-joined HIP options
    # KEY=VALUE per configuration, CONFIG=path a config file, "-" = none), REPS rounds (3) interleaved:
    # configurations next to each other in time
    for rep in $(seq ${REPS:-3}); do
      for c in ${CONFIGS:--}; do
        for spec in ${MODELS:-llama2-7b:Q4_K_M llama2-7b:Q4_0 tinyllama-1.1b:Q4_K_M}; do
          set -- ${spec/:/ }
          r=$(timeout 120 $RF bench -m $(model $1 $2) -p 0 -n 128 -r 3 --backend hip $(hip_opts $c) 2>/dev/null | grep tg128 | awk -F'|' '{print $(NF-1)}')
          log "tg128 $1 $2 [$c]: $r"
        done
      done
    done ;;
  tokcmp) # generate's tokens under the HIP options TOK_A against TOK_B: a switch that must not change results
    ea=$(hip_opts "${TOK_A:-}"); eb=$(hip_opts "${TOK_B:-}"); n=0; d=0
    for m in $(model tinyllama-1.1b Q4_K_M) $(model llama2-7b Q4_K_M) models/trained/kjv-q8_0.gguf; do
      for args in "--temp 0" "--temp 0.8 -s 11" "--temp 0 --parallel 4 -p A -p B" "--temp 0.8 -s 5 --parallel 3"; do
        timeout 120 $RF generate -m $m -p "In the beginning" -n 40 $args --backend hip $ea 2>/dev/null > "$OUT/tok-a.txt"
        timeout 120 $RF generate -m $m -p "In the beginning" -n 40 $args --backend hip $eb 2>/dev/null > "$OUT/tok-b.txt"
        n=$((n + 1))
        if ! cmp -s "$OUT/tok-a.txt" "$OUT/tok-b.txt" || [ ! -s "$OUT/tok-a.txt" ]; then d=$((d + 1)); log "tokens DIFFER: $(basename $m) $args"; fi
      done
    done
    log "tokens [${TOK_A:-}] against [${TOK_B:-}]: $((n - d)) of $n identical"; [ $d -eq 0 ] || failed=1 ;;
  bsweep) # batched decode (7B Q4_K_M, 128-token prompts, S_TG) for each configuration in CONFIGS
    # ("a=1,b=2 a=0 -": comma-joined HIP options KEY=VALUE per configuration, CONFIG=path a config
    # file, "-" = none, BIN=path: that rocmforge binary instead, e.g. an older dist carried
    # alongside), interleaved REPS times
    m=$(model llama2-7b Q4_K_M)
    for rep in $(seq ${REPS:-2}); do
      for c in ${CONFIGS:--}; do
        e=$(hip_opts "$c")
        bin=$RF; case "$c" in BIN=*) bin=${c#BIN=}; e="";; esac # BIN=other/rocmforge: another build
        r=$(timeout 200 $bin bench-inference -m $m --prompts 0 --batches ${BATCHES:-2,4,16} --prompt-len 128 -n 64 -r 1 \
          --backend hip $e 2>>"$OUT/bsweep.err" | grep -E "^\|\s+128 " | awk -F'|' '{printf "%s:%s ", $4+0, $9+0}')
        log "S_TG by sequences [$c]: $r"
      done
    done ;;
  candab) # --candidates on / off: S_TG by sequences and TTFT, then tokens compared
    for spec in llama2-7b:Q4_K_M tinyllama-1.1b:Q4_K_M; do
      set -- ${spec/:/ }
      m=$(model $1 $2)
      for rep in $(seq ${REPS:-2}); do
        for c in on off; do
          timeout 200 $RF bench-inference -m $m --prompts 512 --batches ${BATCHES:-1,2,4,8,16} --prompt-len 128 -n 64 -r 1 \
            --candidates $c --backend hip > "$OUT/candab-$c.txt" 2>>"$OUT/candab.err"
          r="$(grep -E "^\|\s+128 " "$OUT/candab-$c.txt" | awk -F'|' '{printf "%s:%s ", $4+0, $9+0}') ttft $(grep ttft "$OUT/candab-$c.txt" | awk -F'|' '{print $4+0}' | head -1) ms"
          log "$1 $2 candidates $c, S_TG by sequences: $r"
        done
      done
      for temp in 0 0.8; do
        for np in 1 3; do
          for c in on off; do
            timeout 120 $RF generate -m $m -p "In the beginning" -n 64 --temp $temp -s 5 --parallel $np --ignore-eos \
              --candidates $c --backend hip 2>/dev/null > "$OUT/cand-$c.txt"
          done
          cmp -s "$OUT/cand-on.txt" "$OUT/cand-off.txt" && r=identical || r=DIFFER
          log "tokens $1 $2 temp $temp, $np sequences, candidates on vs off: $r ($(wc -c < "$OUT/cand-on.txt") bytes)"
        done
      done
    done ;;
  binab) # tg128 (and pp512 with BINAB_PP=1) of the three bench models (or BINAB_MODELS="shape:type ...")
    # for each rocmforge in BINS (e.g. "dist/tools/rocmforge dist-prev/tools/rocmforge": an older build
    # carried alongside), interleaved
    for spec in ${BINAB_MODELS:-llama2-7b:Q4_K_M llama2-7b:Q4_0 tinyllama-1.1b:Q4_K_M}; do
      set -- ${spec/:/ }
      m=$(model $1 $2)
      for rep in 1 2; do
        for bin in ${BINS:-$RF}; do
          r=$(timeout 120 $bin bench -m $m -p $([ -n "${BINAB_PP:-}" ] && echo 512 || echo 0) -n 128 -r 3 --backend hip 2>/dev/null | grep -E "\| *(pp512|tg128) *\|" | awk -F"|" "{printf \"%s \", \$(NF-1)}")
          log "$1 $2 [$bin]: $r"
        done
      done
    done ;;
  abpp) # the same for prompt processing: pp512 with AB_KEY=A and =B (AB_VALS, default f16_prefill_acts
        # "true false"), interleaved, on AB_MODELS (default "llama2-7b:Q4_K_M llama2-7b:Q4_0 tinyllama-1.1b:Q4_K_M")
    v=${AB_KEY:-f16_prefill_acts}
    for spec in ${AB_MODELS:-"llama2-7b:Q4_K_M" "llama2-7b:Q4_0" "tinyllama-1.1b:Q4_K_M"}; do
      set -- ${spec/:/ }
      m=$(model $1 $2)
      for rep in 1 2; do
        for p in ${AB_VALS:-true false}; do
          r=$(timeout 120 $RF bench -m $m -p 512 -n 0 -r 5 --backend hip $(hip_opts $v=$p) 2>/dev/null | grep pp512 | awk -F'|' '{print $(NF-1)}')
          log "pp512 $1 $2 $v=$p: $r"
        done
      done
    done ;;
  pdl) # programmatic dependent launch on / off: decode speed (interleaved) and identical tokens
    for spec in "llama2-7b Q4_K_M" "llama2-7b Q4_0" "tinyllama-1.1b Q4_K_M"; do
      set -- $spec
      m=$(model $1 $2)
      for rep in 1 2; do
        for p in true false; do
          r=$(timeout 120 $RF bench -m $m -p 0 -n 128 -r 3 --backend hip --backend-option hip.pdl=$p 2>/dev/null | grep tg128 | awk -F'|' '{print $(NF-1)}')
          log "tg128 $1 $2 pdl=$p: $r"
        done
      done
      for p in true false; do
        timeout 120 $RF generate -m $m -p "In the beginning" -n 48 --temp 0 --backend hip --backend-option hip.pdl=$p 2>/dev/null > "$OUT/pdl$p.txt"
      done
      cmp -s "$OUT/pdltrue.txt" "$OUT/pdlfalse.txt" && log "greedy $1 $2 PDL on/off: identical" || log "greedy $1 $2 PDL on/off: DIFFER"
    done ;;
  kprof) # per-kernel times of one decode step (direct launches), TinyLlama Q4_K_M and 7B Q4_0
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    for spec in "tinyllama-1.1b Q4_K_M" "llama2-7b Q4_0"; do
      set -- $spec
      timeout 300 $NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
        $RF generate -m $(model $1 $2) -p "Hello" -n 4 --temp 0 --backend hip --backend-option hip.graphs=false > "$OUT/kprof-$1-$2.csv" 2> "$OUT/kprof.err"
      python3 scripts/kernel_profile_summary.py "$OUT/kprof-$1-$2.csv" > "$OUT/kprof-$1-$2.txt"
      log "-- kernel profile $1 $2"; head -12 "$OUT/kprof-$1-$2.txt" | tee -a "$S"
    done ;;
  kdetail) # Nsight Compute details of one launch of each kernel named in KERNELS (7B Q4_0 decode)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    for k in ${KERNELS:-rf_add_rms_norm_mul}; do
      timeout 300 $NCU --clock-control none -k $k --launch-skip 40 --launch-count 1 --set full \
        $RF generate -m $(model llama2-7b Q4_0) -p "Hello" -n 4 --temp 0 --backend hip --backend-option hip.graphs=false > "$OUT/kdetail-$k.txt" 2>&1
      log "-- ncu $k"; grep -E "^    (Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc|Block Size|Grid Size|L1/TEX Hit|L2 Hit)" "$OUT/kdetail-$k.txt" | tee -a "$S"
      grep -iE "stall|est. speedup" "$OUT/kdetail-$k.txt" | head -8 | cut -c1-220 | tee -a "$S"
    done ;;
  kdetailb) # Nsight Compute details of one launch of each kernel in KERNELS, 7B Q4_K_M decoding KB sequences
    # (PL: prompt tokens per sequence, default 0: the attention then reads a few positions only)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    for k in ${KERNELS:-rf_mvqn_q4_k_2x2}; do
      timeout 300 $NCU --clock-control none -k regex:$k --launch-skip ${SKIP:-100} --launch-count 1 --set full \
        $RF bench-inference -m $(model llama2-7b Q4_K_M) --prompts 0 --batches ${KB:-2} --prompt-len ${PL:-0} -n 6 -r 1 --backend hip --backend-option hip.graphs=false > "$OUT/kdetailb-$k.txt" 2>&1
      log "-- ncu $k (${KB:-2} sequences)"; grep -E "^    (Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Executed Ipc|Block Size|Grid Size|L1/TEX Hit|L2 Hit|Issue Slots Busy|Compute \(SM\) Throughput)" "$OUT/kdetailb-$k.txt" | tee -a "$S"
      grep -iE "stall|est. speedup" "$OUT/kdetailb-$k.txt" | head -8 | cut -c1-240 | tee -a "$S"
    done ;;
  mmq16) # what bounds the 16-column decode matmuls (docs/notes/mmq.md): times per K split, then details
    for ks in 0 1 2 4; do
      timeout 200 $D/tests/hip/rocmforge-opcheck --option mmq_ksplit=$ks --perf --filter "M=16" > "$OUT/mmq16-ks$ks.txt" 2>&1
      log "-- M=16 matmuls, mmq_ksplit=$ks (0: the shape rule)"; grep -E "^matmul" "$OUT/mmq16-ks$ks.txt" | tee -a "$S"
    done
    # (the kdetailb step logs its lines into the same summary)
    KB=16 SKIP=${SKIP:-40} KERNELS=${KERNELS:-"rf_mmq_q4_k_16_k4 rf_mmq_q6_k_16_k4"} "$0" kdetailb > /dev/null 2>&1 ;;
  memcheck)
    CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    # MC_FILTER: only the opcheck cases whose name contains it; MC_PAR: sequences of the generate runs
    timeout 420 $CS --tool memcheck --error-exitcode 9 $D/tests/hip/rocmforge-opcheck ${MC_FILTER:+--filter "$MC_FILTER"} \
      > "$OUT/memcheck-opcheck.txt" 2>&1
    log "memcheck opcheck rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-opcheck.txt" | tail -1) $(grep -E 'passed' "$OUT/memcheck-opcheck.txt" | tail -1)"
    P="$(head -c 1500 models/trained/heldout.txt)"
    for m in $(model tinyllama-1.1b Q4_K_M) $(model tinyllama-1.1b Q4_0) $(model tinyllama-1.1b F16); do
      timeout 200 $CS --tool memcheck --error-exitcode 9 $RF generate -m $m -p "$P" -n 16 --temp 0 --backend hip --parallel ${MC_PAR:-2} \
        > "$OUT/memcheck-gen.txt" 2>&1
      log "memcheck generate $(basename $m) (300-token prompt, ${MC_PAR:-2} sequences) rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-gen.txt" | tail -1)"
    done ;;
  kdetailpp) # Nsight Compute details of one prefill matmul launch of each kernel in KERNELS (pp512)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    for k in ${KERNELS:-rf_mmqp_q4_0_64 rf_mmqp_q4_k_64}; do
      case $k in *q4_0*) m=$(model llama2-7b Q4_0) ;; *) m=$(model llama2-7b Q4_K_M) ;; esac
      timeout 300 $NCU --clock-control none -k $k --launch-skip 10 --launch-count 1 --set full \
        $RF bench -m $m -p 512 -n 0 -r 1 --backend hip --backend-option hip.graphs=false > "$OUT/kdetail-$k.txt" 2>&1
      log "-- ncu $k (pp512)"; grep -E "^    (Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc Active|Issue Slots Busy|Grid Size|Shared Memory Configuration Size|Bank Conflicts)" "$OUT/kdetail-$k.txt" | tee -a "$S"
      grep -iE "stall|est. speedup|bottleneck|pipe" "$OUT/kdetail-$k.txt" | head -14 | cut -c1-220 | tee -a "$S"
    done ;;
  kdetail8k) # Nsight Compute details of the decode attention at 8k context (7B Q4_K_M)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    timeout 300 $NCU --clock-control none -k rf_attention_stream_d128_g1 --launch-skip 200 --launch-count 1 --set full \
      $RF bench -m $(model llama2-7b Q4_K_M) -p 0 -n 8 -d 8192 -r 1 --backend hip --backend-option hip.graphs=false > "$OUT/kdetail8k.txt" 2>&1
    log "-- ncu rf_attention_stream_d128_g1 at 8k"; grep -E "^    (Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Executed Ipc|Block Size|Grid Size|L1/TEX Hit|L2 Hit|Block Limit|Dynamic Shared|Static Shared)" "$OUT/kdetail8k.txt" | tee -a "$S"
    grep -iE "stall|est. speedup|bottleneck" "$OUT/kdetail8k.txt" | head -12 | cut -c1-240 | tee -a "$S" ;;
  par) # sequences decoded together must each equal the single run: knobs isolate a difference
    m=models/trained/kjv-q8_0.gguf
    P='-p "And the LORD" -p "And the LORD" -p "And the LORD" -p "And the LORD"'
    timeout 60 $RF generate -m $m -p "And the LORD" -n 32 --temp 0 --backend cpu 2>/dev/null > "$OUT/par-single.txt"
    for knob in - mvq_max_cols=1 graphs=false fuse=false; do
      eval timeout 60 $RF generate -m $m $P -n 32 --temp 0 --backend hip $(hip_opts $knob) 2>/dev/null > "$OUT/par-hip.txt"
      eval timeout 60 $RF generate -m $m $P -n 32 --temp 0 --backend cpu 2>/dev/null > "$OUT/par-cpu.txt"
      n=$(grep -v "^--- sequence" "$OUT/par-hip.txt" | sort -u | grep -c .)
      cmp -s "$OUT/par-hip.txt" "$OUT/par-cpu.txt" && r="= cpu" || r="DIFFERS from cpu"
      log "parallel 4, $knob: hip $r; distinct hip lines $n"
    done
    cat "$OUT/par-single.txt" "$OUT/par-hip.txt" "$OUT/par-cpu.txt" | head -30 ;;
  fusecmp) # batched greedy tokens with the packs' fusions on and off (hip.fuse): same bits
    # promised; a difference makes the script exit 1
    for spec in ${FUSE_MODELS:-tinyllama-1.1b:Q4_K_M tinyllama-1.1b:Q4_0 llama2-7b:Q4_K_M}; do
      set -- $(echo $spec | tr ':' ' ')
      m=$(model $1 $2)
      for np in ${FUSE_SEQS:-2 5 8 12}; do
        P=""; for i in $(seq $np); do P="$P -p \"Once upon a time $i\""; done
        for run in "a true" "b false" "c true"; do # fused twice: a difference between those is not the fusion's
          set -- $1 $2 $run
          eval timeout 120 $RF generate -m $m $P -n 24 --temp 0 --backend hip --backend-option hip.fuse=$4 2>/dev/null > "$OUT/fuse-$3.txt"
          set -- $1 $2
        done
        cmp -s "$OUT/fuse-a.txt" "$OUT/fuse-b.txt" && r=identical || { r=DIFFER; failed=1; }
        cmp -s "$OUT/fuse-a.txt" "$OUT/fuse-c.txt" && r="$r, repeat identical" || r="$r, repeat DIFFERS"
        log "fused vs unfused, $1 $2, $np sequences: $r"
      done
    done ;;
  families) # qwen3 / gemma2 / gemma3 / phi3: GPU vs CPU greedy tokens on the tiny shapes, then bench of the real shapes
    greedy_vs_cpu "tiny-qwen3 tiny-gemma2 tiny-gemma3 tiny-phi3" "Q8_0 Q4_K_M" fam
    for sh in ${FAM_BENCH:-qwen3-0.6b gemma3-1b gemma2-2b phi3-mini}; do
      log "bench $sh Q4_K_M: $(bench_line $(model $sh Q4_K_M))"
    done ;;
  gptoss) # gpt-oss (docs/MODELS.md): its opcheck cases, greedy tokens, the real shape's speed
    for f in swiglu_oai "rope yarn" sinks add_id of-chosen gpt-oss "mode 2"; do
      timeout 300 $D/tests/hip/rocmforge-opcheck --filter "$f" > "$OUT/gptoss-op.txt" 2>&1
      log "opcheck --filter '$f' rc=$? $(tail -1 "$OUT/gptoss-op.txt")"; grep FAIL "$OUT/gptoss-op.txt" | head -10 | tee -a "$S"
    done
    greedy_vs_cpu "tiny-gpt-oss" "Q8_0 F16" gptoss
    for sh in ${GPTOSS_BENCH:-gpt-oss-20b}; do
      log "bench $sh Q8_0 (MXFP4 experts): $(bench_line $(model $sh Q8_0) 400)"
    done ;;
  moe) # mixture of experts (docs/MODELS.md): correctness, then speed and bytes per token
    for f in matmul_id topk moe; do
      timeout 300 $D/tests/hip/rocmforge-opcheck --filter $f > "$OUT/moe-op-$f.txt" 2>&1
      log "opcheck --filter $f rc=$? $(tail -1 "$OUT/moe-op-$f.txt")"; grep FAIL "$OUT/moe-op-$f.txt" | head -10 | tee -a "$S"
    done
    greedy_vs_cpu "tiny-mixtral tiny-qwen3moe" "Q8_0 Q4_0 F16" moe
    timeout 300 $D/tests/hip/rocmforge-opcheck --perf --filter matmul_id > "$OUT/moe-perf.txt" 2>&1
    log "-- MATMUL_ID kernel times (GB/s over the chosen experts' bytes)"; grep matmul_id "$OUT/moe-perf.txt" | tee -a "$S"
    timeout 300 $D/tests/hip/rocmforge-opcheck --option moe_group_min=0 --perf --filter matmul_id > "$OUT/moe-perf-ungrouped.txt" 2>&1
    log "-- prefill MATMUL_ID with moe_group_min=0 (rf_mm_id_*, not grouped by expert)"
    grep "matmul_id.*M=512" "$OUT/moe-perf-ungrouped.txt" | tee -a "$S"
    for sh in ${MOE_BENCH:-qwen3-30b-a3b mixtral-8x7b}; do
      m=$(model $sh Q4_K_M)
      log "bench $sh Q4_K_M: $(bench_line $m 300)"
      log "bench $sh Q4_K_M, moe_group_min=0: $(bench_line $m 300 moe_group_min=0)"
      timeout 200 $RF generate -m $m -p "Once upon a time" -n 16 --temp 0 --backend hip --profile "$OUT/moe-trace-$sh.json" \
        > /dev/null 2> "$OUT/moe-prof-$sh.txt"
      log "-- profile of 16 decode tokens, $sh (ffn_*_exps rows: bytes are the chosen experts')"
      grep -E "matmul_id|ffn_.*_exps|bytes|GB/s" "$OUT/moe-prof-$sh.txt" | head -12 | tee -a "$S"
      rm -f "$m" # 17-26 GB each: the disk holds one at a time
    done ;;
  kprofb) # per-kernel times of one batched decode step (7B Q4_K_M, 16 sequences)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    timeout 300 $NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      $RF bench-inference -m $(model llama2-7b Q4_K_M) --prompts 0 --batches ${KB:-16} --prompt-len ${PL:-0} -n 6 -r 1 --backend hip --backend-option hip.graphs=false > "$OUT/kprofb.csv" 2> "$OUT/kprofb.err"
    python3 scripts/kernel_profile_summary.py "$OUT/kprofb.csv" > "$OUT/kprofb.txt"
    log "-- kernel profile 7B Q4_K_M, ${KB:-16} sequences"; head -24 "$OUT/kprofb.txt" | tee -a "$S" ;;
  mmqp)
    k=${MMQP_KEY:-mmq_prefill} # MMQP_KEY / MMQP_VALS: another option's values instead
    for v in ${MMQP_VALS:-true false}; do
      timeout 300 $D/tests/hip/rocmforge-opcheck --option $k=$v --perf --filter "${MMQP_FILTER:-M=512}" > "$OUT/mmqp$v.txt" 2>&1
      [ -z "${MMQP_FILTER:-}" ] && timeout 200 $D/tests/hip/rocmforge-opcheck --option $k=$v --perf --filter "M=2048" >> "$OUT/mmqp$v.txt" 2>&1
      log "-- prefill matmuls, $k=$v"; grep -E "matmul" "$OUT/mmqp$v.txt" | tee -a "$S"
    done ;;
  ppl)
    cp models/trained/kjv-f16.gguf models/trained/kjv-q8_0.gguf /tmp/m/
    [ -f /tmp/m/kjv-q4_k_m.gguf ] || $RF quantize models/trained/kjv-f16.gguf /tmp/m/kjv-q4_k_m.gguf Q4_K_M > /dev/null 2>&1
    for m in kjv-f16 kjv-q8_0 kjv-q4_k_m; do
      for c in 128 512; do
        r=""
        for b in cpu hip; do
          r="$r $(timeout 200 $RF perplexity -m /tmp/m/$m.gguf -f models/trained/heldout.txt -c $c -t 16 --backend $b 2>&1 | grep -o "PPL = [0-9.]*" | cut -d' ' -f3)"
        done
        log "ppl $m -c $c (cpu, hip):$r $(python3 -c "import sys; c,g=map(float,sys.argv[1:]); print(f'{100*(g-c)/c:+.4f}%')" $r)"
      done
    done
    P="$(head -c 1500 models/trained/heldout.txt)"
    for m in $(model tinyllama-1.1b Q4_K_M) /tmp/m/kjv-q8_0.gguf; do
      for b in cpu hip; do
        timeout 200 $RF generate -m $m -p "$P" -n 24 --temp 0 --backend $b -t 16 2>/dev/null > "$OUT/long-$b.txt"
      done
      cmp -s "$OUT/long-cpu.txt" "$OUT/long-hip.txt" && log "greedy after a long prompt $(basename $m): identical" || log "greedy after a long prompt $(basename $m): DIFFER"
    done ;;
  depthab) # the HIP option DEPTH_KEY (default attention_blocks_per_sm) at each of DEPTH_VALS (default "4 8 16")
    m=$(model llama2-7b Q4_K_M)
    dv=${DEPTH_KEY:-attention_blocks_per_sm}
    for rep in 1 2; do
      for v in ${DEPTH_VALS:-${ATT_BLOCKS:-4 8 16}}; do
        r=$(timeout 200 $RF bench -m $m -p 0 -n 64 -d 8192 -r 2 --backend hip $(hip_opts $dv=$v) 2>/dev/null | grep "@ d" | awk -F'|' '{print $(NF-1)}')
        log "tg64 @ d8192 $dv=$v: $r"
      done
    done ;;
  attpp)
    for v in true false; do
      timeout 200 $D/tests/hip/rocmforge-opcheck --option attention_mma=$v --perf --filter "attention" > "$OUT/attpp$v.txt" 2>&1
      log "-- prefill attention, attention_mma=$v"; grep -E "T=512 |T=2048 " "$OUT/attpp$v.txt" | tee -a "$S"
    done ;;
  kprofpp) # per-kernel totals of prompt processing (one bench of pp512, two runs)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
    for spec in "llama2-7b Q4_K_M" "llama2-7b Q4_0"; do
      set -- $spec
      timeout 300 $NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
        $RF bench -m $(model $1 $2) -p 512 -n 0 -r 2 --backend hip > "$OUT/kprofpp-$1-$2.csv" 2> "$OUT/kprofpp.err"
      python3 scripts/kernel_profile_summary.py "$OUT/kprofpp-$1-$2.csv" --all > "$OUT/kprofpp-$1-$2.txt"
      log "-- prefill kernel totals $1 $2 (bench -p 512 -r 2, warm-up included)"; head -16 "$OUT/kprofpp-$1-$2.txt" | tee -a "$S"
    done ;;
  profov) # issue 12: --profile (the observer) against no profiler: tg128 interleaved, same greedy tokens;
          # the observer with kernel timestamps (the default) and with events (hip.observer_events=on)
    for sh in tinyllama-1.1b llama2-7b; do
      m=$(model $sh Q4_K_M)
      for r in 1 2 3; do
        for mode in none stamps events; do
          extra=""; ev=off; [ $mode != none ] && extra=--profile; [ $mode = events ] && ev=on
          t=$(timeout 200 $RF bench -m $m -p 0 -n 128 -r 3 --backend hip --backend-option hip.observer_events=$ev $extra 2>/dev/null | grep tg128 | awk -F'|' '{print $(NF-1)}')
          log "profile overhead $sh Q4_K_M round $r $mode: tg128 $t"
        done
      done
      timeout 120 $RF generate -m $m -p "In the beginning" -n 64 --temp 0 --backend hip > "$OUT/prof-$sh-none.txt" 2>/dev/null
      for ev in off on; do
        timeout 120 $RF generate -m $m -p "In the beginning" -n 64 --temp 0 --backend hip --backend-option hip.observer_events=$ev --profile > "$OUT/prof-$sh-on$ev.txt" 2> "$OUT/prof-$sh-$ev.txt"
        cmp -s "$OUT/prof-$sh-on$ev.txt" "$OUT/prof-$sh-none.txt" && log "profile $sh (observer_events=$ev): identical tokens" || { log "profile $sh (observer_events=$ev): DIFFER"; failed=1; }
        grep -E "timing:|unread device timings" "$OUT/prof-$sh-$ev.txt" | tee -a "$S"; grep -A9 "^phase " "$OUT/prof-$sh-$ev.txt" | head -10 | tee -a "$S"
        timeout 120 $RF bench -m $m -p 0 -n 64 -r 1 --backend hip --backend-option hip.observer_events=$ev --backend-option hip.stats=true \
          --profile 2>&1 | grep "hip stats" | tail -1 | sed -E 's/.*(GPU [0-9.]+ us).*(observer: .*)$/observer_events='$ev' \1; \2/' | tee -a "$S"
      done
      grep -A12 "^per op (all shapes)" "$OUT/prof-$sh-off.txt" | head -13 > "$OUT/prof-$sh-ops0.txt"
      grep -A12 "^per op (all shapes)" "$OUT/prof-$sh-on.txt" | head -13 > "$OUT/prof-$sh-ops1.txt"
      log "per op, timestamps | events ($sh):"; paste -d'|' "$OUT/prof-$sh-ops0.txt" "$OUT/prof-$sh-ops1.txt" | tee -a "$S"
    done ;;
  stats)
    m=$(model llama2-7b Q4_K_M)
    for m in $(model llama2-7b Q4_K_M) $(model tinyllama-1.1b Q4_K_M); do
      timeout 120 $RF bench -m $m -p 0 -n 128 -r 2 --backend hip --backend-option hip.stats=true > "$OUT/stats.txt" 2>&1
      log "-- stats tg128 $(basename $m)"; grep -iE "tg128|hip stats" "$OUT/stats.txt" | tail -3 | tee -a "$S"
    done ;;
  packab) # issue 12: the sm_90 pack (base kernels + its fusions) against none ({"jit": "force"}: the base
    # kernels compiled by NVRTC, no pack fusion): rocmforge info, opcheck and greedy tokens without it, then
    # rocmforge ab (one sequence) and batched decode with and without, interleaved
    echo '{}' > /tmp/pack.json
    echo '{"backend_options": {"hip": {"jit": "force"}}}' > /tmp/nopack.json
    for c in pack nopack; do log "-- rocmforge info ($c)"; $RF info --config /tmp/$c.json 2>&1 | grep -iE "pack|jit|fusion" | head -6 | cut -c1-220 | tee -a "$S"; done
    timeout 300 $D/tests/hip/rocmforge-opcheck --gpu-config '{"jit": "force"}' > "$OUT/packab-opcheck.txt" 2>&1
    log "opcheck without the pack: $(grep -E 'passed' "$OUT/packab-opcheck.txt" | tail -1)"
    m=$(model llama2-7b Q4_K_M)
    P=""; for i in $(seq 6); do P="$P -p \"Once upon a time $i\""; done
    for c in pack nopack; do
      eval timeout 200 $RF generate -m $m $P -n 24 --temp 0 --backend hip --config /tmp/$c.json 2>/dev/null > "$OUT/packab-$c.txt"
    done
    cmp -s "$OUT/packab-pack.txt" "$OUT/packab-nopack.txt" && r=identical || r=DIFFER
    log "greedy tokens of 6 sequences (7B Q4_K_M) with and without the pack: $r"
    timeout 300 $RF ab -m $m --config /tmp/pack.json --config /tmp/nopack.json -p 128 -n 128 -r 5 --no-profile > "$OUT/packab-ab.txt" 2>&1
    grep -iE "ratio|B/A|tg|pp|agree" "$OUT/packab-ab.txt" | head -8 | tee -a "$S"
    CONFIGS="CONFIG=/tmp/pack.json CONFIG=/tmp/nopack.json" BATCHES=${BATCHES:-4,16} "$0" bsweep > /dev/null 2>&1 ;;
  bstats) # hip.stats=true while KB sequences decode (7B Q4_K_M): GPU time and host gap per step
    timeout 200 $RF bench-inference -m $(model llama2-7b Q4_K_M) --prompts 0 --batches ${KB:-16} \
      --prompt-len 128 -n 128 -r 1 --backend hip --backend-option hip.stats=true > "$OUT/bstats.txt" 2>&1
    log "-- stats, ${KB:-16} sequences"; grep -iE "^\|\s+128 |hip stats" "$OUT/bstats.txt" | tail -4 | tee -a "$S" ;;
  esac
  log "   [$step: $(( $(date +%s) - t0 )) s]"
done
echo "=================== summary"
cat "$S"
exit $failed
