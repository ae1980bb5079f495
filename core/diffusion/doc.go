// Package diffusion holds the diffusion priors that GOAR and FUD stand on:
// noise schedules, priors behind one interface, samplers, projection and
// in-painting, and the training of a prior.
//
// Priors. A Prior predicts, for a batch of noisy samples x_t at step t, the
// noise that made them: ε(x_t, t) = −√(1−ᾱ_t)·∇log p_t(x_t). Three
// implement it: NetPrior, a trained network (the shipped unet-s, any
// engine.Denoiser); MixturePrior, the closed-form score of a Gaussian
// mixture, the oracle of the tests and the prior of the synthetic
// experiments; Empirical, the training-free denoiser of a finite data set
// (the posterior mean of x₀ over the set's points), for tables and small
// sets.
//
// Samplers. Sample, Decode, Project, Inpaint and Encode run DDIM (any number
// of steps on Schedule.Grid, any η, from any start step) or DDPM's
// ancestral sampler. Project is SDEdit as GOAR uses it; Inpaint is FUD's
// hard-mask in-painting (Eq. 14), RePaint's noised-original variant as an
// option, with FUD's classifier correction as a hook (ClassifierGrad) on the
// last fraction of the steps. Every sampler can record its trajectory (x_t
// and the predicted x̂₀ at every step), reports progress, stops when its
// context is cancelled, and advances Options.Batch samples at a time, so
// memory is bounded whatever the number of samples; the network spreads each
// batch over the cores.
//
// Shapes and ownership. Samples are float32 batches n×C×H×W in one slice,
// as in package engine; tabular samples are (D, 1, 1). Functions leave
// their inputs alone and return new slices; a Prior's Eps writes only into
// the slice it is given.
//
// Scaling. A prior works in its own space, where the data lie in [−1, 1]
// (Scaling maps the data's range [Lo, Hi] there: [0, 1] for images); a
// classifier sees the data's own range. The conversion happens in one place:
// every sampler takes and returns data in the data's own range, converts to
// the prior's space on entry and back on exit, hands a ClassifierGrad the
// data's range and converts its gradient by the chain rule
// (Scaling.DataPerPrior), and records trajectories in the data's range. A
// prior file records its scaling with its schedule (model.Diffusion).
//
// Determinism. The same seed gives the same numbers: sample i draws its
// noise from its own stream (seed, i), whatever the batching or core count.
// TrainPrior takes the order, timesteps and noise of every step from the
// seed and the step's number, and resumes from its checkpoint to the same
// weights, bit for bit, as an uninterrupted run.
package diffusion
