package nn

import "testing"

// TestLoadPretrainedChunks loads the test models with reads of a few
// elements, so that tensors span many chunks and Conv1D rows are longer
// than one, and checks that the weights equal those of the usual reads.
func TestLoadPretrainedChunks(t *testing.T) {
	for _, dir := range []string{"plain", "bf16"} {
		path := "../testdata/pretrained/" + dir
		want, err := LoadPretrained(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, small := range []int{40, 64 + 8} {
			func() {
				defer func(n int) { chunkBytes = n }(chunkBytes)
				chunkBytes = small
				got, err := LoadPretrained(path)
				if err != nil {
					t.Fatal(err)
				}
				wp := want.NamedParameters()
				for i, p := range got.NamedParameters() {
					g, w := p.Param.Float32s(), wp[i].Param.Float32s()
					for k := range w {
						if g[k] != w[k] {
							t.Fatalf("%s, reads of %d bytes: %s[%d] = %v, want %v", dir, small, p.Name, k, g[k], w[k])
						}
					}
				}
			}()
		}
	}
}
