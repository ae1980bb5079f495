package ui

import (
	"fmt"

	"faithlab/core/model"
)

// classNames are the names every screen gives the classes
// (model.ClassNames): the open model's own where it names them, else the
// open dataset's; the dataset's alone where the model does not take it.
func (s *State) classNames() []string {
	var ds []string
	if s.Data != nil {
		ds = s.Data.Train.Classes
	}
	switch {
	case s.Model != nil && s.Data == nil:
		return s.Model.Classes
	case s.Model != nil && !s.Fits():
		return ds
	}
	return model.ClassNames(s.header(), ds)
}

// classLabel names class c of the open dataset (its labels), as every
// screen names it (classNames).
func (s *State) classLabel(c int) string {
	if names := s.classNames(); c >= 0 && c < len(names) {
		return names[c]
	}
	return fmt.Sprint(c)
}

// modelClass names class c of the open model (its predictions and
// targets), as every screen names it: the dataset's name where the
// model's own is only its number.
func (s *State) modelClass(c int) string {
	names := s.classNames()
	if s.Model != nil && !s.Fits() {
		names = s.Model.Classes
	}
	if c >= 0 && c < len(names) {
		return names[c]
	}
	return fmt.Sprint(c)
}
