package nn

// GPTTargetForTest returns the parameter names and shapes that a GPT
// checkpoint of c is checked against before its model is built.
func GPTTargetForTest(c GPTConfig) ([]string, [][]int) { return gptTarget(c).lists() }

// LlamaTargetForTest is GPTTargetForTest for a Llama-family model.
func LlamaTargetForTest(c LlamaConfig) ([]string, [][]int) { return llamaTarget(c).lists() }

func (t loadTarget) lists() (names []string, shapes [][]int) {
	for _, p := range t.params {
		names, shapes = append(names, p.name), append(shapes, p.shape)
	}
	return names, shapes
}
