// Package torch is Faithlab's PyTorch engine: networks computed by a
// worker process — a Python script embedded in the binary (worker.py) —
// on this machine or on a GPU host over SSH, behind the same interfaces as
// the native engine (engine.Network, engine.Gradienter, engine.CAMLayerer,
// engine.Denoiser, train.EpochRunner).
//
// The worker. Open starts `python3 -u -c BOOTSTRAP`, locally or as
// `ssh HOST python3 …`; the bootstrap reads the worker script from stdin,
// and the framed protocol follows on the same stdin and stdout: each frame
// is a uint32 little-endian header length, a JSON header, and the raw
// little-endian arrays (float32, int32, bytes) the header lists. Nothing
// listens on a socket: SSH is the only authentication. A worker ends at
// the end of its stdin (its parent's end), when its parent changes, and,
// on Linux, by the kernel's parent-death signal; it sends a heartbeat
// while it works, so that a silent one is taken for hung and stopped.
// It uses CUDA when it sees a GPU (device=auto), else the CPU with every
// core it may use, and sets cudnn.deterministic and deterministic
// algorithms (warn only) unless asked not to.
//
// Requests: build a built-in architecture (goar-cnn, mlp, resnet18,
// logreg, unet-s: the modules and parameter names of native and of
// shared/bench/torch_peer.py) or load a TorchScript classifier; forward;
// backward (input and parameter gradients; the layers' gradients for
// Grad-CAM); a layer's activation; DeepLift's rescale rule; reset a
// module's parameters; and training: the training set sent once into the
// device's memory, then one request per epoch that streams batch events
// and returns the new weights, so that a GPU is not starved by a round
// trip per batch.
//
// Weights. A network's weights live on the Go side too (Params, by
// PyTorch's state_dict names), and are the truth: before each request the
// parameters whose values changed since they were last sent go with it,
// and after the worker changed them (training, batch-norm statistics, a
// reset) they come back. So a worker that died is replaced at the next
// request and every network rebuilt there; the request under way fails
// with an error that names the host, the process and the cause. A network
// is freed in the worker with the next request (a build among them) once
// released (engine.Release: a campaign's task does, when done) or
// collected; the worker then hands the freed pages back to the system.
// A TorchScript image model runs there in channels-last layout.
//
// Results are close to the native engine's, not bit-identical: other
// kernels sum in other orders (on a GPU, other hardware). The package's
// tests measure the difference for every architecture.
//
// Buffers follow package engine: slices a network returns are its own
// until its next call. A Net or UNet is not safe for concurrent use; an
// Engine is, and serves its networks' requests one at a time.
package torch
