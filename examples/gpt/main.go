// Command gpt trains a tiny character-level GPT on a short text, the
// notebook's (examples/wick.ipynb) training steps as a program: it builds a
// vocabulary of the text's characters (tokenizer.NewChar), trains nanoGPT's
// model with AdamW on random windows, plots the train and validation loss into a PNG and
// samples some text from the trained model.
//
//	go run ./examples/gpt                     # the built-in verses, loss.png
//	go run ./examples/gpt -data input.txt -iters 2000 -out curve.png
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/plot"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// corpus is the default training text: Shakespeare's sonnets 18 and 116
// (public domain).
const corpus = `Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date;
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance or nature's changing course untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou ow'st;
Nor shall death brag thou wander'st in his shade,
When in eternal lines to time thou grow'st:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.
Let me not to the marriage of true minds
Admit impediments. Love is not love
Which alters when it alteration finds,
Or bends with the remover to remove.
O no! it is an ever-fixed mark
That looks on tempests and is never shaken;
It is the star to every wand'ring bark,
Whose worth's unknown, although his height be taken.
Love's not Time's fool, though rosy lips and cheeks
Within his bending sickle's compass come;
Love alters not with his brief hours and weeks,
But bears it out even to the edge of doom.
If this be error and upon me prov'd,
I never writ, nor no man ever lov'd.
`

func main() {
	data := flag.String("data", "", "text file to train on (default: two built-in sonnets)")
	iters := flag.Int("iters", 300, "training iterations")
	out := flag.String("out", "loss.png", "where to write the loss curve (PNG)")
	flag.Parse()
	if err := run(*data, *iters, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gpt:", err)
		os.Exit(1)
	}
}

func run(dataPath string, iters int, out string) error {
	text := corpus
	if dataPath != "" {
		b, err := os.ReadFile(dataPath)
		if err != nil {
			return err
		}
		text = string(b)
	}

	// A character-level vocabulary: one id per distinct character.
	tok := tokenizer.NewChar([]byte(text))
	ids := tok.Encode(text)
	n := len(ids) * 9 / 10
	train, val := ids[:n], ids[n:]
	fmt.Printf("%d characters, vocabulary of %d\n", len(ids), tok.VocabSize())

	tensor.ManualSeed(1337)
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 32, NLayer: 2, NHead: 2, NEmbd: 48, Bias: true}
	model := nn.NewGPT(cfg)
	fmt.Printf("%.2fK parameters\n", float64(nn.NumParams(model))/1e3)

	const batch = 16
	rng := rand.New(rand.NewPCG(1, 2))
	getBatch := func(split []int) (x, y *tensor.Tensor) {
		xs := make([]int, 0, batch*cfg.BlockSize)
		ys := make([]int, 0, batch*cfg.BlockSize)
		for range batch {
			i := rng.IntN(len(split) - cfg.BlockSize - 1)
			xs = append(xs, split[i:i+cfg.BlockSize]...)
			ys = append(ys, split[i+1:i+cfg.BlockSize+1]...)
		}
		return tensor.FromInts(xs, batch, cfg.BlockSize), tensor.FromInts(ys, batch, cfg.BlockSize)
	}

	opt := optim.NewAdamWGroups(optim.DecayGroups(model.Parameters(), 0.1),
		optim.AdamWConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.99})
	sched := optim.CosineLR{MaxLR: 3e-3, MinLR: 3e-4, WarmupIters: iters / 10, DecayIters: iters}
	var trainX, trainY, valX, valY []float64
	for it := range iters {
		opt.SetLR(sched.At(it))
		x, y := getBatch(train)
		loss := model.Loss(x, y)
		loss.Backward()
		optim.ClipGradNorm(model.Parameters(), 1)
		opt.Step()
		opt.ZeroGrad()
		trainX = append(trainX, float64(it))
		trainY = append(trainY, float64(loss.Item()))

		if it%25 == 0 || it == iters-1 {
			model.Eval()
			var v float32
			autograd.NoGrad(func() {
				vx, vy := getBatch(val)
				v = model.Loss(vx, vy).Item()
			})
			model.Train()
			valX = append(valX, float64(it))
			valY = append(valY, float64(v))
			fmt.Printf("iter %4d  train %.4f  val %.4f\n", it, loss.Item(), v)
		}
	}

	png, err := plot.LossCurvePNG("tiny GPT, character level",
		plot.Series{Name: "train", X: trainX, Y: trainY},
		plot.Series{Name: "val", X: valX, Y: valY})
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", out)

	// Sample: start from a newline and let the model continue.
	model.Eval()
	start := tensor.FromInts(tok.Encode("\n"), 1, 1)
	gen := model.Generate(start, 200, 0.8, 10)
	fmt.Println("sample:")
	fmt.Println(tok.Decode(gen.Ints()[1:]))
	return nil
}
