package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wickml/wick/tensor"
)

// A train checkpoint of a run with LoRA adapters (Checkpoint.Adapter)
// holds the frozen base model under its own names, as any checkpoint does,
// the adapters' tensors under PEFT's names (AdapterPrefix + NAME.lora_A.weight,
// …), the optimizer's state of the adapters, and the adapters' PEFT config
// (adapter_config.json's fields) under metaLoRA in the MetaTrain record.
// So a resumed run continues the adapters, and LoadCheckpoint returns the
// adapted model.

// AdapterPrefix is what PEFT puts in front of the base model's module
// names in an adapter's tensor names (base_model.model.), and what a train
// checkpoint's adapter tensors start with.
const AdapterPrefix = peftPrefix

// metaLoRA is the MetaTrain record's key of the adapters' PEFT config.
const metaLoRA = "lora_config"

// modelTensors returns the base model's tensors of ck.Tensors: neither the
// optimizer's nor the adapters'.
func (ck *Checkpoint) modelTensors() StateDict {
	return ck.Tensors.WithoutPrefix(OptimizerPrefix).WithoutPrefix(peftPrefix)
}

// adapterRecord puts ck.Adapter's PEFT config into the MetaTrain record
// (and removes a stale one when ck has no adapters).
func (ck *Checkpoint) adapterRecord(rec map[string]json.RawMessage) error {
	delete(rec, metaLoRA)
	if ck.Adapter == nil {
		return nil
	}
	if ck.Adapter.removed || ck.Adapter.Merged() {
		return errors.New("the LoRA adapters are merged into the model (Unmerge them before saving a checkpoint)")
	}
	js, err := ck.Adapter.peftConfigJSON()
	if err != nil {
		return fmt.Errorf("adapter config: %w", err)
	}
	rec[metaLoRA] = js
	return nil
}

// adapterTensors adds ck.Adapter's tensors to sd under PEFT's names.
func (ck *Checkpoint) adapterTensors(sd StateDict) {
	if ck.Adapter == nil {
		return
	}
	for _, p := range ck.Adapter.NamedParameters() {
		sd[peftPrefix+p.Name] = p.Param.Detach()
	}
}

// applyAdapter applies the checkpoint's adapters, when it has any, to m
// (just built from the base tensors) and sets ck.Adapter. The adapters'
// initial values are drawn from a generator of their own, so building the
// model still draws no random numbers from the global generator.
func (ck *Checkpoint) applyAdapter(m Module) error {
	var rec map[string]json.RawMessage
	if len(ck.Metadata) > 0 {
		if err := json.Unmarshal(ck.Metadata, &rec); err != nil {
			return fmt.Errorf("nn: checkpoint %s is corrupt: metadata: %v", ck.Path, err)
		}
	}
	adapters := ck.Tensors.WithPrefix(peftPrefix)
	raw, ok := rec[metaLoRA]
	if !ok {
		if len(adapters) > 0 {
			return fmt.Errorf("nn: checkpoint %s is corrupt: it holds adapter tensors (%s…) but no %s", ck.Path, peftPrefix+adapters.Names()[0], metaLoRA)
		}
		return nil
	}
	corrupt := func(err error) error {
		return fmt.Errorf("nn: checkpoint %s is corrupt: %s: %s", ck.Path, metaLoRA, strings.ReplaceAll(strings.TrimPrefix(err.Error(), "nn: "), "\n", "; "))
	}
	var pc peftConfig
	if err := json.Unmarshal(raw, &pc); err != nil {
		return corrupt(err)
	}
	cfg, err := pc.loraConfig()
	if err != nil {
		return corrupt(err)
	}
	cfg.Gen = tensor.NewGenerator(0)
	l, err := ApplyLoRA(m, cfg)
	if err != nil {
		return corrupt(err)
	}
	if err := l.LoadStateDict(adapters); err != nil {
		return corrupt(err)
	}
	l.Config.Gen = nil
	l.Eval()
	ck.Adapter = l
	return nil
}
