package protocol

import "fmt"

// NeedsLabels says why p cannot run on unlabelled samples (an image
// folder of images alone, data.Dataset.Unlabelled), "" where it can: it
// retrains a model (ROAR, KAR, ROAD with retraining, Eval-X, data
// randomisation, GOAR's classifier), counts the inputs the model
// classifies correctly (GOAR), builds mosaics of inputs of different
// classes (Focus), or explains the labelled class (target: label). Every
// other protocol explains and scores the class the model predicts.
func NeedsLabels(p Protocol) string {
	switch p.(type) {
	case GOAR, *GOAR:
		return "it counts the inputs the model classifies correctly"
	case Focus, *Focus:
		return "it builds its mosaics of inputs of different classes"
	}
	if RetrainingsOf(p) > 0 || SharedRetrainingsOf(p) > 0 {
		return "it retrains the model on labelled data"
	}
	if t, _ := config(p)["target"].(string); t == "label" {
		return "it explains the labelled class (target: label; predicted needs none)"
	}
	return ""
}

// unlabelled is AppliesTo's error for a protocol that needs labels on
// unlabelled samples ("" for none).
func unlabelled(p Protocol) error {
	why := NeedsLabels(p)
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s needs labels, and the data has none (a folder of images without class folders): %s; put the images in class folders named by the model's classes", p.Info().Name, why)
}
