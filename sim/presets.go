package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultProfile is the preset used when none is named.
const DefaultProfile = "a100-7b"

// chatOutput is the presets' answer length when ignore_eos is not set: a
// lognormal with mean 256, close to ShareGPT answers (the dataset vLLM's
// own serving benchmark replays).
var chatOutput = LengthDist{Kind: "lognormal", Mean: 256, Sigma: 0.8}

// presets builds every named profile afresh, so callers may change what
// they get. docs/sim.md explains each figure.
var presets = map[string]func() Profile{
	"a100-7b":    a100With7B,
	"h100-8b":    h100With8B,
	"h100x4-70b": h100x4With70B,
	"cpu-small":  cpuSmall,
	"tiny":       tiny,
}

// a100With7B is Llama-2-7B in BF16 on one A100-SXM4-80GB under a vLLM
// 0.4-era server, calibrated against the published figures in docs/sim.md.
func a100With7B() Profile {
	return Profile{
		Name:                "a100-7b",
		Description:         "Llama-2-7B BF16 on 1×A100-80G, vLLM 0.4-like (default)",
		Model:               "meta-llama/Llama-2-7b-chat-hf",
		MaxModelLen:         4096,
		MaxNumSeqs:          256,
		MaxNumBatchedTokens: 512,
		BlockSize:           16,
		NumGPUBlocks:        7225,
		Cost: CostModel{
			StepOverhead:    22 * time.Millisecond,
			PrefillPerToken: 60 * time.Microsecond,
			DecodePerSeq:    10 * time.Microsecond,
			KVReadPerToken:  257 * time.Nanosecond,
		},
		OutputLength: chatOutput,
		GPU: GPU{
			Name: "NVIDIA A100-SXM4-80GB", Count: 1, MemoryMiB: 81920,
			WeightsMiB: 12852, KVBytesPerToken: 2 * 32 * 32 * 128 * 2, ReservedMiB: 3072,
			IdleWatts: 60, MaxWatts: 400,
		},
	}
}

// h100With8B is Llama-3.1-8B in BF16 on one H100-SXM-80GB under a recent
// vLLM (V1 engine, CUDA graphs, far less CPU overhead per step).
func h100With8B() Profile {
	return Profile{
		Name:                "h100-8b",
		Description:         "Llama-3.1-8B BF16 on 1×H100-80G, recent vLLM",
		Model:               "meta-llama/Llama-3.1-8B-Instruct",
		MaxModelLen:         8192,
		MaxNumSeqs:          256,
		MaxNumBatchedTokens: 8192,
		BlockSize:           16,
		NumGPUBlocks:        27000,
		Cost: CostModel{
			StepOverhead:    6 * time.Millisecond,
			PrefillPerToken: 35 * time.Microsecond,
			DecodePerSeq:    20 * time.Microsecond,
			KVReadPerToken:  39 * time.Nanosecond,
		},
		OutputLength: chatOutput,
		GPU: GPU{
			Name: "NVIDIA H100 80GB HBM3", Count: 1, MemoryMiB: 81559,
			WeightsMiB: 15317, KVBytesPerToken: 2 * 32 * 8 * 128 * 2, ReservedMiB: 4096,
			IdleWatts: 70, MaxWatts: 700,
		},
	}
}

// h100x4With70B is Llama-3.1-70B in BF16 over four H100s, tensor
// parallel: each GPU holds a quarter of the weights and KV heads.
func h100x4With70B() Profile {
	return Profile{
		Name:                "h100x4-70b",
		Description:         "Llama-3.1-70B BF16 on 4×H100-80G (tensor parallel 4), recent vLLM",
		Model:               "meta-llama/Llama-3.1-70B-Instruct",
		MaxModelLen:         16384,
		MaxNumSeqs:          256,
		MaxNumBatchedTokens: 8192,
		BlockSize:           16,
		NumGPUBlocks:        27000,
		Cost: CostModel{
			StepOverhead:    14 * time.Millisecond,
			PrefillPerToken: 80 * time.Microsecond,
			DecodePerSeq:    40 * time.Microsecond,
			KVReadPerToken:  24 * time.Nanosecond,
		},
		OutputLength: chatOutput,
		GPU: GPU{
			Name: "NVIDIA H100 80GB HBM3", Count: 4, MemoryMiB: 81559,
			WeightsMiB: 134570, KVBytesPerToken: 2 * 80 * 8 * 128 * 2, ReservedMiB: 5120,
			IdleWatts: 70, MaxWatts: 700,
		},
	}
}

// cpuSmall is Qwen2.5-0.5B on a server CPU (vLLM's CPU backend or
// llama.cpp): small batches, slow prefill, no GPU metrics.
func cpuSmall() Profile {
	return Profile{
		Name:                "cpu-small",
		Description:         "Qwen2.5-0.5B on a 16-core server CPU",
		Model:               "Qwen/Qwen2.5-0.5B-Instruct",
		MaxModelLen:         4096,
		MaxNumSeqs:          16,
		MaxNumBatchedTokens: 2048,
		BlockSize:           16,
		NumGPUBlocks:        21845,
		Cost: CostModel{
			StepOverhead:    15 * time.Millisecond,
			PrefillPerToken: 500 * time.Microsecond,
			DecodePerSeq:    time.Millisecond,
			KVReadPerToken:  154 * time.Nanosecond,
		},
		OutputLength: chatOutput,
	}
}

// tiny is a fast, small engine for tests and demos of queueing: steps of
// about a millisecond and a KV cache small enough to run out.
func tiny() Profile {
	return Profile{
		Name:                "tiny",
		Description:         "toy model with 1 ms steps, for tests",
		Model:               "tiny-sim",
		MaxModelLen:         2048,
		MaxNumSeqs:          64,
		MaxNumBatchedTokens: 512,
		BlockSize:           16,
		NumGPUBlocks:        1024,
		Cost: CostModel{
			StepOverhead:    time.Millisecond,
			PrefillPerToken: 2 * time.Microsecond,
			DecodePerSeq:    10 * time.Microsecond,
			KVReadPerToken:  time.Nanosecond,
		},
		OutputLength: LengthDist{Kind: "lognormal", Mean: 32, Sigma: 0.5},
		GPU: GPU{
			Name: "NVIDIA A100-SXM4-80GB", Count: 1, MemoryMiB: 81920,
			WeightsMiB: 1024, KVBytesPerToken: 65536, ReservedMiB: 1024,
			IdleWatts: 60, MaxWatts: 400,
		},
	}
}

// Profiles lists the preset names, sorted.
func Profiles() []string {
	names := make([]string, 0, len(presets))
	for name := range presets {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// LookupProfile returns the named preset; an unknown name's error lists
// the valid ones. The empty name is DefaultProfile.
func LookupProfile(name string) (Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	build, ok := presets[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown sim profile %q; valid: %s (or a YAML file)", name, strings.Join(Profiles(), ", "))
	}
	return build().WithDefaults(), nil
}
