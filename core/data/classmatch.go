package data

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ClassList is a model's classes as an image folder's class folders may
// name them: by Names (a description's classes) or, where the model
// lists them, by ImageNet's WordNet ids (WNIDs, n01440764 …), one per
// class in the same order.
type ClassList struct {
	Names []string
	WNIDs []string
}

// Numbered says whether names are only the classes' numbers, "0", "1", …
// in order: what a model without class names (an ONNX graph without a
// description) is given, which names nothing a dataset's names would not.
func Numbered(names []string) bool {
	for i, n := range names {
		if n != strconv.Itoa(i) {
			return false
		}
	}
	return len(names) > 0
}

// wnidPattern is a WordNet noun synset id as ImageNet names its classes.
var wnidPattern = regexp.MustCompile(`^n[0-9]{8}$`)

// CheckWNIDs says whether ids can name n classes: one per class, each a
// WordNet noun id (n and eight digits), none twice.
func CheckWNIDs(ids []string, n int) error {
	if len(ids) != n {
		return fmt.Errorf("%d wnids for %d classes: give one per class, in the classes' order", len(ids), n)
	}
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		if !wnidPattern.MatchString(id) {
			return fmt.Errorf("wnid %d is %q: want n and eight digits, as ImageNet's n01440764", i, id)
		}
		if j, dup := seen[id]; dup {
			return fmt.Errorf("wnid %s names classes %d and %d", id, j, i)
		}
		seen[id] = i
	}
	return nil
}

// foldName is a class name as a folder may spell it: case and the
// separators _ and - against spaces do not matter ("great_white_shark"
// names "great white shark").
func foldName(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), " ")
}

// matchClasses gives each class folder (folders, names as on disk) its
// index in the model's classes l. A folder matches a class by its exact
// name, its WordNet id, or its name folded (foldName) where no other
// class folds to the same. Where every folder matches, the labels are
// those indices (ok). Where none matches and there are as many folders as
// classes, the folders are the classes in lexical order, as for a model
// trained on the folder (ok false, nil error). Anything else is an error
// naming the folders that match no class, with a hint: the first classes
// of the model (and their wnids).
func matchClasses(folders []string, l *ClassList) (labels []int, ok bool, err error) {
	exact := make(map[string]int, len(l.Names)+len(l.WNIDs))
	folded := make(map[string]int, len(l.Names))
	for i, n := range l.Names {
		if _, dup := exact[n]; !dup {
			exact[n] = i
		} else {
			exact[n] = -1 // a name two classes share: ambiguous
		}
		f := foldName(n)
		if j, dup := folded[f]; dup && j != i {
			folded[f] = -1
		} else {
			folded[f] = i
		}
	}
	for i, id := range l.WNIDs {
		exact[id] = i
	}
	var unmatched, ambiguous []string
	labels = make([]int, len(folders))
	for k, f := range folders {
		i, found := exact[f]
		if !found {
			i, found = folded[foldName(f)]
		}
		switch {
		case !found:
			unmatched = append(unmatched, f)
		case i < 0:
			ambiguous = append(ambiguous, f)
		default:
			labels[k] = i
		}
	}
	if len(ambiguous) > 0 {
		how := "rename the folder"
		if len(l.WNIDs) > 0 {
			how = "name the folder by its class's wnid"
		}
		return nil, false, fmt.Errorf("class folders %s each name more than one of the model's classes: %s", quoteList(ambiguous, 8), how)
	}
	switch {
	case len(unmatched) == 0:
		return labels, true, nil
	case len(unmatched) == len(folders) && len(folders) == len(l.Names):
		for k := range labels {
			labels[k] = k
		}
		return labels, false, nil
	}
	by := "by a class's name"
	if len(l.WNIDs) > 0 {
		by = "by a class's name or wnid"
	}
	return nil, false, fmt.Errorf("%d of %d class folders match none of the model's %d classes: %s; name each folder %s (the model's first classes: %s)",
		len(unmatched), len(folders), len(l.Names), quoteList(unmatched, 8), by, firstClasses(l, 5))
}

// firstClasses names the first n of l's classes, with their wnids.
func firstClasses(l *ClassList, n int) string {
	var s []string
	for i, name := range l.Names[:min(n, len(l.Names))] {
		if len(l.WNIDs) == len(l.Names) {
			s = append(s, fmt.Sprintf("%s %q", l.WNIDs[i], name))
		} else {
			s = append(s, fmt.Sprintf("%q", name))
		}
	}
	if len(l.Names) > n {
		s = append(s, "…")
	}
	return strings.Join(s, ", ")
}

// quoteList quotes the first n names, then counts the rest.
func quoteList(names []string, n int) string {
	var s []string
	for _, x := range names[:min(n, len(names))] {
		s = append(s, fmt.Sprintf("%q", x))
	}
	if len(names) > n {
		s = append(s, fmt.Sprintf("and %d more", len(names)-n))
	}
	return strings.Join(s, ", ")
}
