package reproduce

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"faithlab/core/report"
)

// RunInfo is what the report says of the run behind its verdicts.
type RunInfo struct {
	Size                  string
	Data                  map[string]string // the user's datasets, by name → path (Options.Data)
	Dir                   string            // the run folder
	ID                    string            // the campaign's run id
	Done, Failed, Missing int               // tasks
	Manifest              string            // versions, machine, start and end (campaign.Results.State)
	Seconds               float64           // this call's wall time
	TaskSeconds           float64           // the finished tasks' time, over every call that ran them
}

// Markdown is a reproduction's REPORT.md: the verdicts in a table, then
// claim by claim the paper's words and numbers beside ours, the verdict
// and the rule and interval behind it; how the run was scaled down and
// what data it lacks.
func Markdown(r *Reproduction, run RunInfo, vs []Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Reproduction %s: %s\n\n", r.Name, r.Title)
	fmt.Fprintf(&b, "Paper: %s.\n\n", oneLine(r.Paper))
	fmt.Fprintf(&b, "Size **%s**: %s\n\n", run.Size, oneLine(r.Sizes[run.Size].Scaled))
	for _, name := range slices.Sorted(maps.Keys(run.Data)) {
		alt := r.Alternatives[name]
		fmt.Fprintf(&b, "Data: %s from `%s`, read in place of %s, with the paper's model trained on it (the size's other settings as above).\n\n", alt.Name, run.Data[name], alt.Replaces)
	}
	fmt.Fprintf(&b, "Run %s in `%s`: %d tasks done (%.0f s of task time), %d failed, %d not run; %.0f s in this call. %s.\n\n",
		run.ID, run.Dir, run.Done, run.TaskSeconds, run.Failed, run.Missing, run.Seconds, run.Manifest)
	paper, ours := splitExtensions(vs)
	b.WriteString("## Verdicts\n\n")
	fmt.Fprintf(&b, "The paper's claims: %s.\n\n", tally(paper))
	verdictTable(&b, paper)
	if len(ours) > 0 {
		fmt.Fprintf(&b, "Our extensions — the paper's words asked of a setting the paper did not run them on, kept out of the count above: %s.\n\n", tally(ours))
		verdictTable(&b, ours)
	}
	for _, v := range append(paper, ours...) {
		c := v.Claim
		fmt.Fprintf(&b, "## %s — %s\n\n", c.ID, outcomeWords(v))
		if c.Extension != "" {
			fmt.Fprintf(&b, "Our extension, not the paper's claim: %s\n\n", oneLine(c.Extension))
		}
		fmt.Fprintf(&b, "> %s\n\n(%s)\n\n", oneLine(c.Quote), oneLine(c.Source))
		if len(c.Paper) > 0 {
			b.WriteString("| | paper | ours |\n|---|---|---|\n")
			for _, n := range c.Paper {
				ours := v.Ours[numberKey(n)]
				if ours == "" {
					ours = "—"
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(n.What), cell(n.Value), cell(ours))
			}
			b.WriteString("\n")
		}
		if v.Setting != "" {
			fmt.Fprintf(&b, "Setting: %s. ", v.Setting)
		}
		fmt.Fprintf(&b, "Ours: %s\n\n", oneLine(v.Result))
		if v.Rule != "" {
			fmt.Fprintf(&b, "Rule: %s.\n\n", v.Rule)
		}
		if v.Provisional != "" {
			fmt.Fprintf(&b, "Provisional: %s.\n\n", v.Provisional)
		}
	}
	if r.Data != "" {
		fmt.Fprintf(&b, "## Data this machine lacks\n\n%s\n", strings.TrimSpace(r.Data))
	}
	return b.String()
}

// splitExtensions parts the paper's claims from our extensions, each in
// the file's order.
func splitExtensions(vs []Verdict) (paper, ours []Verdict) {
	for _, v := range vs {
		if v.Claim.Extension != "" {
			ours = append(ours, v)
		} else {
			paper = append(paper, v)
		}
	}
	return paper, ours
}

// tally counts verdicts by outcome ("3 hold, 1 in part, 1 not evaluated;
// 2 provisional").
func tally(vs []Verdict) string {
	var parts []string
	for _, o := range []Outcome{Holds, InPart, DoesNotHold, Inconclusive, NotEvaluated} {
		n := 0
		for _, v := range vs {
			if v.Outcome == o {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, plural(o, n)))
		}
	}
	s := fmt.Sprintf("%d, of which %s", len(vs), strings.Join(parts, ", "))
	prov := 0
	for _, v := range vs {
		if v.Provisional != "" {
			prov++
		}
	}
	if prov > 0 {
		s += fmt.Sprintf("; %d provisional (fewer than %d retraining seeds)", prov, MinSeeds)
	}
	return s
}

// plural is an outcome said of n claims ("3 hold", "1 holds").
func plural(o Outcome, n int) string {
	if n == 1 {
		return string(o)
	}
	return strings.NewReplacer("holds", "hold", "does not", "do not").Replace(string(o))
}

func verdictTable(b *strings.Builder, vs []Verdict) {
	b.WriteString("| claim | source | verdict | ours |\n|---|---|---|---|\n")
	for _, v := range vs {
		fmt.Fprintf(b, "| %s | %s | **%s** | %s |\n", v.Claim.ID, cell(v.Claim.Source), outcomeWords(v), cell(headline(v)))
	}
	b.WriteString("\n")
}

// outcomeWords is the outcome with its qualifier (provisional).
func outcomeWords(v Verdict) string {
	s := string(v.Outcome)
	if v.Provisional != "" {
		s += " (provisional: " + report.Count(v.Seeds, "seed") + ")"
	}
	return s
}

// headline is the verdict's figure for the table: its check's main one.
func headline(v Verdict) string {
	if v.Outcome == NotEvaluated {
		return v.Result
	}
	o := v.Ours
	if e := v.Claim.Check.Expect; e == "flat" || e == "near" {
		within := o["pairs"] + " pairs within ±" + fmt.Sprint(v.Claim.Check.Within)
		if v.Claim.Check.Kind == "order" {
			return "ρ " + o["rho"] + "; " + within
		}
		return within
	}
	switch v.Claim.Check.Kind {
	case "order":
		return "ρ " + o["rho"] + "; " + o["apart"] + " pairs told apart"
	case "versus":
		return o["pairs"] + " pairs as claimed"
	case "post":
		return o["count"] + " comparisons improved"
	case "tv":
		var parts []string
		for _, n := range v.Claim.Paper {
			if s := o[n.Key]; strings.HasPrefix(n.Key, "r2:") && s != "" {
				parts = append(parts, strings.TrimPrefix(n.Key, "r2:")+": "+s)
			}
		}
		return "R² " + strings.Join(parts, "; ")
	case "truth":
		if v.Claim.Check.Expect == "low" {
			return fmt.Sprintf("r below %g in %s measures beyond the noise; %s negative", v.Claim.Check.Within, o["low"], o["negative"])
		}
		return "r higher in " + o["lead"] + " comparisons, " + o["apart"] + " beyond the noise"
	case "scores":
		return o["a"] + " against " + o["b"] + ", difference " + o["diff"]
	case "across":
		return o["pairs"] + " pairs as claimed"
	case "reorders":
		return "Kendall's τ " + o["tau"] + "; " + o["flips"] + " pairs in opposite orders beyond the noise"
	}
	return ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cell(s string) string { return strings.NewReplacer("|", "\\|").Replace(oneLine(s)) }
