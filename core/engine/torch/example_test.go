package torch_test

import (
	"context"
	"fmt"

	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/engine/torch"
)

// A native network's weights move to the worker by name; the network
// there then serves the engine interfaces. (Not run as a test: it needs
// PyTorch; the package's tests do the same.)
func ExampleEngine_New() {
	ctx := context.Background()
	e, err := torch.Open(ctx, "torch", torch.Options{}) // or "torch@ssh://gpu1?device=cuda"
	if err != nil {
		fmt.Println(err) // names the machine and what to install
		return
	}
	defer e.Close()
	nat, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, gemm.Gonum{})
	nat.Init(1)
	net, err := e.New(ctx, "goar-cnn", []int{1, 28, 28}, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range net.Params() {
		copy(p.Data, nat.Params()[i].Data)
	}
	logits, err := net.Forward(make([]float32, 28*28), 1)
	fmt.Println(len(logits), err, net.CAMLayer())
}
