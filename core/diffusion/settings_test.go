package diffusion

import "testing"

// A checkpoint of another run is refused with the settings that differ,
// by their names in the training record, not as a Go struct.
func TestAnotherRunsCheckpointNamesTheSettingsThatDiffer(t *testing.T) {
	a := TrainConfig{Epochs: 10, BatchSize: 64, LR: 1e-3, Schedule: "cosine"}
	b := TrainConfig{Epochs: 10, BatchSize: 128, LR: 1e-3, Schedule: "linear"}
	if got, want := settingsBesides(a, b), "batch_size 64, schedule cosine"; got != want {
		t.Errorf("settingsBesides = %q, want %q", got, want)
	}
	if got := settingsBesides(a, a); got != "the same settings" {
		t.Errorf("settingsBesides of equal settings = %q", got)
	}
}
